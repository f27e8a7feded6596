// Text search over episode content within the visible set ($group_ids), by one of two
// plans, chosen here by how many episodes the visible set holds (counted up to
// $exact_max + 1 from the group_id index, without reading them):
//
// exact, at most $exact_max visible episodes: BM25 (k1 1.2, b 0.75) computed over
// those episodes alone, from their words (content_terms, see cypher.Words; an episode
// written without them falls back to its lower-cased content). A fulltext index holds
// every space's episodes, and when few of its hits are visible the filter reads and
// drops hundreds of hits per hit kept; reading the visible episodes themselves costs
// less (BENCHMARKS.md). Term statistics come from the visible episodes only, so no
// score depends on text the requester cannot see.
//
// index, more than that: the episode_content fulltext index (BM25 over the whole
// index), every hit checked against the visible set in score order. The procedure
// yields hits best first, so the filter and the limit stream.
MATCH (v:Episodic) WHERE v.group_id IN $group_ids
WITH v LIMIT $exact_max + 1
WITH collect(v) AS visible
CALL {
  WITH visible
  WITH visible WHERE size(visible) <= $exact_max
  UNWIND visible AS e
  WITH e, coalesce(e.content_terms, ' ' + toLower(e.content) + ' ') AS text
  WITH e, toFloat(size(text)) AS len, [t IN $terms | (size(text) - size(replace(text, ' ' + t + ' ', ''))) / (size(t) + 2)] AS tf
  WITH collect({e: e, len: len, tf: tf}) AS docs, avg(len) AS avglen, toFloat(count(*)) AS n
  WITH docs, avglen, n, [i IN range(0, size($terms) - 1) | toFloat(size([d IN docs WHERE d.tf[i] > 0]))] AS df
  UNWIND docs AS d
  WITH d.e AS e, reduce(s = 0.0, i IN range(0, size($terms) - 1) | s + CASE d.tf[i] WHEN 0 THEN 0.0
    ELSE log(1 + (n - df[i] + 0.5) / (df[i] + 0.5)) * d.tf[i] * 2.2 / (d.tf[i] + 1.2 * (0.25 + 0.75 * d.len / avglen)) END) AS score
  WHERE score > 0
  RETURN e, score ORDER BY score DESC LIMIT $limit
  UNION ALL
  WITH visible
  WITH visible WHERE size(visible) > $exact_max
  CALL db.index.fulltext.queryNodes('episode_content', $query) YIELD node AS e, score
  WHERE e.group_id IN $group_ids
  RETURN e, score LIMIT $limit
}
RETURN e, score
