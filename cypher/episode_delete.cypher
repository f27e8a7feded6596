// Erase one episode and its earlier versions, after episode_unlink (retire false) has
// taken what was derived from it, in the same transaction.
MATCH (e:Episodic {uuid: $uuid})
WHERE e.group_id = $group_id
// memory.deleted (webhook_emit): deleted by a request or erased once it expired.
CALL (e) {
  WITH {id: randomUUID(), kind: 'memory.deleted', group_id: e.group_id, subject: e.uuid, agent: e.agent_id,
        at: datetime()} AS ev
  CALL (ev) {
{{webhook_emit}}
  }
}
OPTIONAL MATCH (e)-[:HAS_VERSION]->(v:MemoryVersion)
DETACH DELETE e, v
