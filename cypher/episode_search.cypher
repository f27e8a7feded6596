// Text search over episode content within the visible set ($group_ids), BM25 over the
// visible set alone (_bm25), by one of two plans, chosen here by how many episodes the
// visible set holds (counted up to $exact_max + 1 from the group_id index, without
// reading them):
//
// exact, at most $exact_max visible episodes: every visible episode's words are read
// (content_terms; an episode written without them falls back to its lower-cased
// content). A fulltext index holds every space's episodes, and when few of its hits
// are visible the filter reads and drops hundreds of hits per hit kept; reading the
// visible episodes themselves costs less (BENCHMARKS.md).
//
// index, more than that: the episode_content fulltext index finds the episodes holding
// one of the words ($query: the words in content, within the visible spaces' group_ids
// when there are few enough of them), every hit is checked against the visible set,
// and the visible ones are scored from their words as the exact plan scores them, with
// the visible set's size counted in full. The index's own score, whose statistics
// cover every space, is never read. The index is eventually consistent (001_graphiti):
// it is asked once it has taken in every transaction committed before this one began,
// so the index plan finds the memories written before the search as the exact plan
// does.
MATCH (v:Episodic) WHERE v.group_id IN $group_ids
WITH v LIMIT $exact_max + 1
WITH collect(v) AS visible
OPTIONAL CALL (visible) {
  WITH visible WHERE size(visible) <= $exact_max
  UNWIND visible AS x
  WITH x, size(visible) AS total WHERE {{episode_filter}}
  WITH x, total, coalesce(x.content_terms, ' ' + toLower(x.content) + ' ') AS text
  {{bm25}}
  RETURN x AS e, score
  UNION ALL
  WITH visible WHERE size(visible) > $exact_max
  CALL () {
    MATCH (v:Episodic) WHERE v.group_id IN $group_ids
    RETURN count(v) AS total
  }
  CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
  CALL db.index.fulltext.queryNodes('episode_content', $query) YIELD node AS x
  WITH x, total WHERE {{episode_filter}}
  WITH x, total, coalesce(x.content_terms, ' ' + toLower(x.content) + ' ') AS text
  {{bm25}}
  RETURN x AS e, score
}
RETURN e, score, size(visible) > $exact_max AS indexed
