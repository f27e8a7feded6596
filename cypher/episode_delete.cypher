// Erase one episode and its earlier versions, after episode_unlink (retire false) has
// taken what was derived from it, in the same transaction.
MATCH (e:Episodic {uuid: $uuid})
WHERE e.group_id = $group_id
OPTIONAL MATCH (e)-[:HAS_VERSION]->(v:MemoryVersion)
DETACH DELETE e, v
