// Replace an episode's fields ($props; a null removes one) and keep what they were as
// a :MemoryVersion node ($previous) it points to; then erase the versions $drop
// names and all but the newest $keep. $group_id is its space from now on: the episode
// and the versions it keeps carry it (a move leaves nothing behind). Runs after
// episode_lock and, when the content or the space changes, episode_unlink (and, for a
// move, episode_move_hold).
MATCH (e:Episodic {uuid: $uuid})
CREATE (e)-[:HAS_VERSION]->(v:MemoryVersion)
SET v = $previous
SET e += $props
WITH e
CALL (e) {
  MATCH (e)-[:HAS_VERSION]->(x:MemoryVersion)
  WITH x ORDER BY x.version DESC
  WITH collect(x) AS kept
  UNWIND range(0, size(kept) - 1) AS i
  WITH kept[i] AS x, i
  WHERE i >= $keep OR x.version IN $drop
  DETACH DELETE x
}
CALL (e) {
  MATCH (e)-[:HAS_VERSION]->(x:MemoryVersion)
  SET x.group_id = $group_id
}
SET e.group_id = $group_id
// memory.updated, about the space it is in now (webhook_emit).
WITH e
CALL (e) {
  WITH {id: randomUUID(), kind: 'memory.updated', group_id: e.group_id, subject: e.uuid, agent: e.agent_id,
        at: datetime()} AS ev
  CALL (ev) {
{{webhook_emit}}
  }
}
RETURN e
