// requires: Neo4j 2026.01
// A second vector index over fact embeddings that carries group_id as a filter
// property (WITH [r.group_id], Cypher 25), so fact vector search can keep the filter
// inside the index (SEARCH ... WHERE r.group_id = g) rather than widening through
// other spaces' facts: fact_search_vector_filtered, chosen in graph/neo4jstore/vplan.go.
// Neo4j 5.26 has neither the syntax nor the feature: there the statement is skipped
// and the version is recorded all the same (see cypher.Migration). The settings are
// 003_vector's (unquantized, HNSW 32 / 200), and Migrate checks and rebuilds this
// index as it does those. It costs a second copy of every fact vector in memory and a
// second index write per fact.
CYPHER 25 CREATE VECTOR INDEX fact_group_embedding IF NOT EXISTS
  FOR ()-[r:RELATES_TO]-() ON r.fact_embedding WITH [r.group_id]
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false,
                         `vector.hnsw.m`: $hnsw_m, `vector.hnsw.ef_construction`: $hnsw_ef_construction}};
