// Vector search over episode content within the visible set ($group_ids): exact
// cosine over every visible episode that has an embedding, as fact_search_vector. Of
// the filters, the range of created_at and expiry (_episode_filter).
MATCH (x:Episodic) WHERE x.group_id IN $group_ids
WITH x WHERE x.content_embedding IS NOT NULL AND {{episode_filter}}
WITH x, vector.similarity.cosine(x.content_embedding, $embedding) AS score ORDER BY score DESC LIMIT $limit
RETURN x AS e, score
