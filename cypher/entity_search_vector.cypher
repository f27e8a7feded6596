// Vector search over entity name embeddings within the visible set: exact cosine over
// every visible entity, as fact_search_vector.
MATCH (n:Entity) WHERE n.group_id IN $group_ids
WITH n WHERE n.name_embedding IS NOT NULL AND {{entity_filter}} AND {{entity_typed}}
WITH n, vector.similarity.cosine(n.name_embedding, $embedding) AS score ORDER BY score DESC LIMIT $limit
RETURN {{entity_row}}, score
