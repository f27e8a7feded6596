// New entities, and new summaries of existing ones; group_id is set last (see
// episodeParams). An entity is only ever matched within its own space.
UNWIND $entities AS x
MERGE (n:Entity {uuid: x.uuid})
ON CREATE SET n.name = x.name, n.created_at = x.created_at, n.group_id = x.group_id
WITH n, x
WHERE n.group_id = x.group_id
SET n.summary = x.summary, n.name_embedding = x.name_embedding, n.name_terms = x.name_terms,
    n.name_words = x.name_words
SET n:$(x.labels)
SET n.group_id = x.group_id
