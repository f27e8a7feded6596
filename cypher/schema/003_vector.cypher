// Vector indexes, which Graphiti's Neo4j driver lacks (it scans every edge). The
// dimension comes from embedder.dimensions; the migration refuses to run when an
// existing index was built for another one. The vectors are kept unquantized: with
// Neo4j's default int8 quantization a tenth of the facts of the search benchmark
// could not be found even by their own vector, and recall@10 stayed at 0.9 however
// many candidates were asked for (BENCHMARKS.md); unquantized it is 1.0, for four
// times the memory. Migrate rebuilds an index created quantized.
CREATE VECTOR INDEX entity_name_embedding IF NOT EXISTS
  FOR (n:Entity) ON (n.name_embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX edge_fact_embedding IF NOT EXISTS
  FOR ()-[e:RELATES_TO]-() ON (e.fact_embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false}};
