// Empty a team's space and delete the team, after team_lock and team_memories in the
// same transaction: $moves names, per agent that still exists, the private space its
// memories go back to. Each moved memory is queued for extraction there, its versions
// with it; a memory whose agent is gone is erased with its versions; every entity
// (and so every fact and mention) and conflict of the space is deleted; then the team and its
// memberships.
CALL () {
  UNWIND $moves AS m
  MATCH (e:Episodic)
  WHERE e.group_id = $group_id AND e.agent_id = m.agent
  OPTIONAL MATCH (e)-[:HAS_VERSION]->(v:MemoryVersion)
  SET v.group_id = m.group_id
  WITH DISTINCT e, m
  SET e.status = 'queued', e.attempts = 0, e.last_error = '', e.entity_edges = [], e.lease_owner = null,
      e.lease_expires_at = null, e.retry_at = null, e.visibility_rule = ''
  SET e.group_id = m.group_id
}
CALL () {
  MATCH (e:Episodic)
  WHERE e.group_id = $group_id
  OPTIONAL MATCH (e)-[:HAS_VERSION]->(v:MemoryVersion)
  DETACH DELETE e, v
}
CALL () {
  MATCH (n:Entity)
  WHERE n.group_id = $group_id
  DETACH DELETE n
}
CALL () {
  MATCH (c:Conflict)
  WHERE c.group_id = $group_id
  DETACH DELETE c
}
MATCH (t:Team {name: $name})
DETACH DELETE t
RETURN count(*) AS deleted
