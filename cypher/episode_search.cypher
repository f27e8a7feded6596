// Text search over episode content within the visible set ($group_ids), by one of two
// plans, chosen here by how many episodes the visible set holds (counted up to
// $exact_max + 1 from the group_id index, without reading them):
//
// exact, at most $exact_max visible episodes: BM25 computed over those episodes alone,
// from their words (content_terms; an episode written without them falls back to its
// lower-cased content). A fulltext index holds every space's episodes, and when few of
// its hits are visible the filter reads and drops hundreds of hits per hit kept;
// reading the visible episodes themselves costs less (BENCHMARKS.md).
//
// index, more than that: the episode_content fulltext index (BM25 over the whole
// index), every hit checked against the visible set in score order. $options limits
// the hits the index ranks ({limit: n}, or {} for all of them): ranking every match of
// a common word costs more than the rest of the query, so the caller asks for a few
// candidates first and again for more while the filter leaves fewer than $limit
// (indexed is true). The index is eventually consistent (001_graphiti): it is asked
// once it has taken in every transaction committed before this one began, so the
// index plan finds the memories written before the search as the exact plan does.
MATCH (v:Episodic) WHERE v.group_id IN $group_ids
WITH v LIMIT $exact_max + 1
WITH collect(v) AS visible
OPTIONAL CALL (visible) {
  WITH visible WHERE size(visible) <= $exact_max
  UNWIND visible AS x
  WITH x WHERE {{episode_filter}}
  WITH x, coalesce(x.content_terms, ' ' + toLower(x.content) + ' ') AS text
  {{bm25}}
  RETURN x AS e, score
  UNION ALL
  WITH visible WHERE size(visible) > $exact_max
  CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
  CALL db.index.fulltext.queryNodes('episode_content', $query, $options) YIELD node AS e, score
  WITH e AS x, score
  WHERE {{episode_filter}}
  RETURN x AS e, score LIMIT $limit
}
RETURN e, score, size(visible) > $exact_max AS indexed
