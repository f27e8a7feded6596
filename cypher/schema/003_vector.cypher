// Vector indexes, which Graphiti's Neo4j driver lacks (it scans every edge). The
// dimension comes from embedder.dimensions; the migration refuses to run when an
// existing index was built for another one. The vectors are kept unquantized: with
// Neo4j's default int8 quantization, 80 of the first 200 facts written in one space of
// the search benchmark were not among the ten nearest to their own vector, and
// recall@10 stayed at 0.905 however many candidates were asked for (BENCHMARKS.md);
// unquantized, 196 of 200 and 1.000, for four times the memory. Each HNSW node keeps
// $hnsw_m neighbours and is linked by searching $hnsw_ef_construction candidates,
// not Neo4j's 16 and 100: once the benchmark's corpora were merged into one large
// Lucene segment, an index built with 16 and 100 found 0.27 of the exact top ten
// among its many near-equal facts at 400 candidates; built with 32 and 200, 0.96.
// Migrate rebuilds an index built otherwise.
CREATE VECTOR INDEX entity_name_embedding IF NOT EXISTS
  FOR (n:Entity) ON (n.name_embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false,
                         `vector.hnsw.m`: $hnsw_m, `vector.hnsw.ef_construction`: $hnsw_ef_construction}};
CREATE VECTOR INDEX edge_fact_embedding IF NOT EXISTS
  FOR ()-[e:RELATES_TO]-() ON (e.fact_embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false,
                         `vector.hnsw.m`: $hnsw_m, `vector.hnsw.ef_construction`: $hnsw_ef_construction}};
