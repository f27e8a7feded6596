// fact_search_vector on a Neo4j that filters inside a vector index (2026.01 and later,
// Cypher 25; vplan.go chooses it once fact_group_embedding is online): the same exact
// plan up to $exact_max visible facts, and above it, instead of the whole-graph index
// and its widening through other spaces' facts, fact_group_embedding searched once per
// visible space with the space inside the index's search (SEARCH ... WHERE r.group_id
// = g: equality and ranges only, not IN), $k candidates each, the best $limit of all
// kept. The caller asks again with a larger $k when the filters left fewer than $limit
// (indexed is true). The searched relationship is named found, a name used nowhere else
// in the query: Neo4j 2026.01.4 fails to plan the SEARCH when its variable shares a
// name with another (the other branch's r, or _fact_typed's e), "key not found:
// SymbolUse(...)".
CYPHER 25
MATCH ()-[v:RELATES_TO]->() WHERE v.group_id IN $group_ids
WITH v LIMIT $exact_max + 1
WITH collect(v) AS visible
OPTIONAL CALL (visible) {
  WITH visible WHERE size(visible) <= $exact_max
  UNWIND visible AS r
  WITH r WHERE r.fact_embedding IS NOT NULL AND {{fact_filter}} AND {{fact_typed}}
  RETURN r, vector.similarity.cosine(r.fact_embedding, $embedding) AS score ORDER BY score DESC LIMIT $limit
  UNION ALL
  WITH visible WHERE size(visible) > $exact_max
  UNWIND $group_ids AS g
  CALL (g) {
    MATCH ()-[found:RELATES_TO]->()
      SEARCH found IN (VECTOR INDEX fact_group_embedding FOR $embedding WHERE found.group_id = g LIMIT $k) SCORE AS score
    RETURN found AS r, score
  }
  WITH r, score WHERE {{fact_filter}} AND {{fact_typed}}
  RETURN r, score ORDER BY score DESC LIMIT $limit
}
RETURN {{fact_row}}, score, size(visible) > $exact_max AS indexed
