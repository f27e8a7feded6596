// Vector search over entity name embeddings within the visible set; the two plans of
// fact_search_vector.
MATCH (v:Entity) WHERE v.group_id IN $group_ids
WITH v LIMIT $exact_max + 1
WITH collect(v) AS visible
OPTIONAL CALL (visible) {
  WITH visible WHERE size(visible) <= $exact_max
  UNWIND visible AS n
  WITH n WHERE n.name_embedding IS NOT NULL AND {{entity_filter}} AND {{entity_typed}}
  RETURN n, vector.similarity.cosine(n.name_embedding, $embedding) AS score ORDER BY score DESC LIMIT $limit
  UNION ALL
  WITH visible WHERE size(visible) > $exact_max
  CALL db.index.vector.queryNodes('entity_name_embedding', $k, $embedding) YIELD node AS n, score
  WHERE {{entity_filter}} AND {{entity_typed}}
  RETURN n, score ORDER BY score DESC LIMIT $limit
}
RETURN {{entity_row}}, score, size(visible) > $exact_max AS indexed
