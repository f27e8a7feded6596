// Fulltext (BM25) over episode content; the visible set is applied to every hit. The
// procedure yields hits ordered by score (its documented contract), so the filter and
// the limit stream: the scan stops at the limit-th visible hit instead of sorting
// every hit first. The caller orders the rows it gets by score.
CALL db.index.fulltext.queryNodes('episode_content', $query) YIELD node AS e, score
WHERE e.group_id IN $group_ids
RETURN e, score
LIMIT $limit
