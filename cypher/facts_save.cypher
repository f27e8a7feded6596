// New facts, and existing ones with more supporting episodes or new temporal bounds.
// Both ends must be entities of the fact's own space.
UNWIND $facts AS f
MATCH (s:Entity {uuid: f.source}), (t:Entity {uuid: f.target})
WHERE s.group_id = f.group_id AND t.group_id = f.group_id
MERGE (s)-[r:RELATES_TO {uuid: f.uuid}]->(t)
SET r.name = f.name, r.fact = f.fact, r.fact_embedding = f.fact_embedding, r.episodes = f.episodes,
    r.created_at = f.created_at, r.expired_at = f.expired_at, r.valid_at = f.valid_at,
    r.invalid_at = f.invalid_at, r.fact_terms = f.fact_terms
SET r.group_id = f.group_id
