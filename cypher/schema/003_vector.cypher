// Vector indexes, which Graphiti's Neo4j driver lacks (it scans every edge). The
// dimension comes from embedder.dimensions; the migration refuses to run when an
// existing index was built for another one.
CREATE VECTOR INDEX entity_name_embedding IF NOT EXISTS
  FOR (n:Entity) ON (n.name_embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX edge_fact_embedding IF NOT EXISTS
  FOR ()-[e:RELATES_TO]-() ON (e.fact_embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};
