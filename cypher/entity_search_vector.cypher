// Vector search over entity name embeddings within the visible set; the two plans of
// fact_search_vector.
MATCH (v:Entity) WHERE v.group_id IN $group_ids
WITH v LIMIT $exact_max + 1
WITH collect(v) AS visible
OPTIONAL CALL (visible) {
  WITH visible WHERE size(visible) <= $exact_max
  UNWIND visible AS n
  WITH n WHERE n.name_embedding IS NOT NULL AND {{entity_filter}}
  RETURN n, vector.similarity.cosine(n.name_embedding, $embedding) AS score, true AS above ORDER BY score DESC LIMIT $limit
  UNION ALL
  WITH visible WHERE size(visible) > $exact_max
  CALL db.index.vector.queryNodes('entity_name_embedding', $k, $embedding) YIELD node AS n, score AS approx
  WITH collect([n, approx]) AS candidates, min(approx) AS floor
  UNWIND candidates AS c
  WITH c[0] AS n, c[1] AS approx, floor
  WHERE {{entity_filter}}
  WITH n, approx > floor AS above
  RETURN n, vector.similarity.cosine(n.name_embedding, $embedding) AS score, above ORDER BY score DESC LIMIT $limit
}
RETURN {{entity_row}}, score, above, size(visible) > $exact_max AS indexed
