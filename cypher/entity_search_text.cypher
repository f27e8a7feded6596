// Text search over entities (name and summary) within the visible set, BM25 over the
// visible set alone. Two plans, as episode_search: the visible entities themselves
// (name_terms) when there are at most $exact_max, else the node_name_and_summary
// fulltext index finds the entities holding one of the words ($query) and the visible
// ones are scored from their words.
MATCH (v:Entity) WHERE v.group_id IN $group_ids
WITH v LIMIT $exact_max + 1
WITH collect(v) AS visible
OPTIONAL CALL (visible) {
  WITH visible WHERE size(visible) <= $exact_max
  UNWIND visible AS n
  WITH n, size(visible) AS total WHERE {{entity_filter}} AND {{entity_typed}}
  WITH n AS x, total, coalesce(n.name_terms, ' ' + toLower(n.name) + ' ') AS text
  {{bm25}}
  RETURN x AS n, score
  UNION ALL
  WITH visible WHERE size(visible) > $exact_max
  CALL () {
    MATCH (v:Entity) WHERE v.group_id IN $group_ids
    RETURN count(v) AS total
  }
  CALL db.index.fulltext.queryNodes('node_name_and_summary', $query) YIELD node AS n
  WITH n, total WHERE n:Entity AND {{entity_filter}} AND {{entity_typed}}
  WITH n AS x, total, coalesce(n.name_terms, ' ' + toLower(n.name) + ' ') AS text
  {{bm25}}
  RETURN x AS n, score
}
RETURN {{entity_row}}, score, size(visible) > $exact_max AS indexed
