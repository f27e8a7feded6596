// Text search over facts (relation name and sentence) within the visible set, with the
// temporal and other filters of _fact_filter, BM25 over the visible set alone. Two
// plans, as episode_search: the visible facts themselves (fact_terms) when there are at
// most $exact_max, else the edge_name_and_fact fulltext index finds the facts holding
// one of the words ($query) and the visible ones are scored from their words.
MATCH ()-[v:RELATES_TO]->() WHERE v.group_id IN $group_ids
WITH v LIMIT $exact_max + 1
WITH collect(v) AS visible
OPTIONAL CALL (visible) {
  WITH visible WHERE size(visible) <= $exact_max
  UNWIND visible AS r
  WITH r, size(visible) AS total WHERE {{fact_filter}} AND {{fact_typed}}
  WITH r AS x, total, coalesce(r.fact_terms, ' ' + toLower(r.fact) + ' ') AS text
  {{bm25}}
  RETURN x AS r, score
  UNION ALL
  WITH visible WHERE size(visible) > $exact_max
  CALL () {
    MATCH ()-[v:RELATES_TO]->() WHERE v.group_id IN $group_ids
    RETURN count(v) AS total
  }
  CALL db.index.fulltext.queryRelationships('edge_name_and_fact', $query) YIELD relationship AS r
  WITH r, total WHERE {{fact_filter}} AND {{fact_typed}}
  WITH r AS x, total, coalesce(r.fact_terms, ' ' + toLower(r.fact) + ' ') AS text
  {{bm25}}
  RETURN x AS r, score
}
RETURN {{fact_row}}, score, size(visible) > $exact_max AS indexed
