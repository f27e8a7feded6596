// Episode -> entity mentions, each within the episode's own space.
UNWIND $mentions AS m
MATCH (ep:Episodic {uuid: m.episode}), (n:Entity {uuid: m.entity})
WHERE n.group_id = ep.group_id
MERGE (ep)-[r:MENTIONS]->(n)
ON CREATE SET r.uuid = randomUUID(), r.created_at = $now
SET r.group_id = ep.group_id
