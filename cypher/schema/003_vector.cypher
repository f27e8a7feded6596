// Vector indexes, which Graphiti's Neo4j driver lacks (it scans every edge). The
// dimension comes from embedder.dimensions; the migration refuses to run when an
// existing index was built for another one. The vectors are kept unquantized: with
// Neo4j's default int8 quantization, 80 of the first 200 facts written in one space of
// the search benchmark were not among the ten nearest to their own vector, and
// recall@10 stayed at 0.905 however many candidates were asked for (BENCHMARKS.md);
// unquantized, 196 of 200 and 1.000, for four times the memory. Each HNSW node keeps
// $hnsw_m neighbours and is linked by searching $hnsw_ef_construction candidates,
// not Neo4j's 16 and 100. Lucene keeps an index in segments, one HNSW graph each,
// searched one by one; the benchmark's 200,000 facts are full of near-equal ones, and
// where a few small segments are searched almost exhaustively, one large graph
// misses: once most facts had been merged into one segment, the one-space shape's
// recall@10 at 400 candidates fell from 0.985 to 0.275 with 16 and 100, and was 0.64
// to 0.71 with 32 and 200. Neo4j merges by its own policy, so an index grows into
// large segments in time; these settings make them less blind, for about a third
// more time writing. Migrate rebuilds an index built otherwise. That loss is the
// hashing embedder's: its vectors of texts that share no word are nearly orthogonal,
// HNSW's worst case; the same corpus embedded with a sentence model
// (all-MiniLM-L6-v2, 384 dimensions) gave recall@10 1.000 at 400 candidates.
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
