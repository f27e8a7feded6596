// Text search over entities (name and summary) within the visible set. Two plans, as
// episode_search: BM25 over the visible entities themselves (name_terms) when there
// are at most $exact_max, else the node_name_and_summary fulltext index, filtered, asked
// for as many as $options says (see episode_search).
MATCH (v:Entity) WHERE v.group_id IN $group_ids
WITH v LIMIT $exact_max + 1
WITH collect(v) AS visible
OPTIONAL CALL (visible) {
  WITH visible WHERE size(visible) <= $exact_max
  UNWIND visible AS n
  WITH n WHERE {{entity_filter}} AND {{entity_typed}}
  WITH n AS x, coalesce(n.name_terms, ' ' + toLower(n.name) + ' ') AS text
  {{bm25}}
  RETURN x AS n, score
  UNION ALL
  WITH visible WHERE size(visible) > $exact_max
  CALL db.index.fulltext.queryNodes('node_name_and_summary', $query, $options) YIELD node AS n, score
  WHERE n:Entity AND {{entity_filter}} AND {{entity_typed}}
  RETURN n, score LIMIT $limit
}
RETURN {{entity_row}}, score, size(visible) > $exact_max AS indexed
