// Vector search over episode content within the visible set ($group_ids): exact
// cosine over every visible episode that has an embedding (_episode_meaning), as
// fact_search_vector. Of the filters, the range of created_at, the reference time
// up to as_of, and expiry (_episode_filter).
MATCH (x:Episodic) WHERE x.group_id IN $group_ids
WITH x WHERE x.content_embedding IS NOT NULL AND {{episode_filter}}
{{episode_meaning}}
RETURN x AS e, score
