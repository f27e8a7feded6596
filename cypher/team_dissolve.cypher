// Empty a team's space and delete the team, after team_lock and team_memories in the
// same transaction: $moves names, per agent, the memories (uuids) that go back to its
// private space (group_id), and the agent's owner. Each is queued for extraction there
// with the versions that hold the agent's own words for that owner (_own_words;
// another's are erased: no one's words but the owner's enter a private space); every
// other memory of the space is erased with its versions; every
// entity (and so every fact and mention) and conflict of the space is deleted; then
// the team and its memberships.
CALL () {
  UNWIND $moves AS m
  MATCH (e:Episodic)
  WHERE e.uuid IN m.uuids AND e.group_id = $group_id
  CALL (e, m) {
    MATCH (e)-[:HAS_VERSION]->(x:MemoryVersion)
    WITH x, m.owner AS owner
    WHERE NOT coalesce({{own_words}}, false)
    DETACH DELETE x
  }
  CALL (e, m) {
    MATCH (e)-[:HAS_VERSION]->(v:MemoryVersion)
    SET v.group_id = m.group_id
  }
  SET e.status = CASE WHEN e.extract = false THEN 'done' ELSE 'queued' END, e.attempts = 0, e.last_error = '', e.entity_edges = [], e.lease_owner = null,
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
CALL () {
  // The webhooks following the team, and every delivery about its space.
  MATCH (w:Webhook {org: $org, team: $name})
  OPTIONAL MATCH (d:WebhookDelivery {webhook_id: w.id})
  DETACH DELETE w, d
}
CALL () {
  MATCH (d:WebhookDelivery)
  WHERE d.group_id = $group_id
  DETACH DELETE d
}
MATCH (t:Team {org: $org, name: $name})
DETACH DELETE t
RETURN count(*) AS deleted
