// How memgate's vector indexes were built: the dimension, whether they quantize, and
// their HNSW settings (Neo4j's defaults when the index does not say); and whether
// each is online.
SHOW VECTOR INDEXES YIELD name, options, state
WHERE name IN ['entity_name_embedding', 'edge_fact_embedding']
RETURN name, options.indexConfig.`vector.dimensions` AS dimensions,
       coalesce(options.indexConfig.`vector.quantization.enabled`, false) AS quantized,
       coalesce(options.indexConfig.`vector.hnsw.m`, 16) AS m,
       coalesce(options.indexConfig.`vector.hnsw.ef_construction`, 100) AS ef_construction,
       state
