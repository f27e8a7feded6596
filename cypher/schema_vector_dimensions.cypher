// How memgate's vector indexes were built: the dimension, and whether they quantize.
SHOW VECTOR INDEXES YIELD name, options
WHERE name IN ['entity_name_embedding', 'edge_fact_embedding']
RETURN name, options.indexConfig.`vector.dimensions` AS dimensions,
       coalesce(options.indexConfig.`vector.quantization.enabled`, false) AS quantized
