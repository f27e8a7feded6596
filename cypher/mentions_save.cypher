MATCH (ep:Episodic {uuid: $episode})
UNWIND $mentions AS id
MATCH (n:Entity {uuid: id})
WHERE n.group_id = ep.group_id
MERGE (ep)-[r:MENTIONS]->(n)
ON CREATE SET r.uuid = randomUUID(), r.created_at = $now
SET r.group_id = ep.group_id
