// Text search over facts (relation name and sentence) within the visible set, with the
// temporal and other filters of _fact_filter. Two plans, as episode_search: BM25 over
// the visible facts themselves (fact_terms) when there are at most $exact_max, else
// the edge_name_and_fact fulltext index with every hit checked in score order, asked
// for as many as $options says (see episode_search).
MATCH ()-[v:RELATES_TO]->() WHERE v.group_id IN $group_ids
WITH v LIMIT $exact_max + 1
WITH collect(v) AS visible
OPTIONAL CALL (visible) {
  WITH visible WHERE size(visible) <= $exact_max
  UNWIND visible AS r
  WITH r WHERE {{fact_filter}} AND {{fact_typed}}
  WITH r AS x, coalesce(r.fact_terms, ' ' + toLower(r.fact) + ' ') AS text
  {{bm25}}
  RETURN x AS r, score
  UNION ALL
  WITH visible WHERE size(visible) > $exact_max
  CALL db.index.fulltext.queryRelationships('edge_name_and_fact', $query, $options) YIELD relationship AS r, score
  WHERE {{fact_filter}} AND {{fact_typed}}
  RETURN r, score LIMIT $limit
}
RETURN {{fact_row}}, score, size(visible) > $exact_max AS indexed
