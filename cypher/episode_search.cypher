// Fulltext (BM25) over episode content; the visible set is applied to every hit.
CALL db.index.fulltext.queryNodes('episode_content', $query) YIELD node AS e, score
WHERE e:Episodic AND e.group_id IN $group_ids
RETURN e, score
ORDER BY score DESC
LIMIT $limit
