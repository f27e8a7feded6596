// The last change of a requester's erasure, after its agents' (agent_delete) and the
// pseudonymization, under requester_erase_lock's locks: its shared space emptied
// (every episode and version, entity, and so fact and mention, and conflict), its
// principal deleted with its grants, memberships, promoter role and whatever else
// links to it, and the teams it owned given to $pseudonym: they stay their members'.
CALL () {
  MATCH (e:Episodic)
  WHERE e.group_id = $shared
  OPTIONAL MATCH (e)-[:HAS_VERSION]->(v:MemoryVersion)
  DETACH DELETE e, v
}
CALL () {
  MATCH (n:Entity)
  WHERE n.group_id = $shared
  DETACH DELETE n
}
CALL () {
  MATCH (c:Conflict)
  WHERE c.group_id = $shared
  DETACH DELETE c
}
CALL () {
  // Its webhooks and their deliveries, and every delivery about its shared space.
  MATCH (w:Webhook {org: $org, requester: $id})
  OPTIONAL MATCH (d:WebhookDelivery {webhook_id: w.id})
  DETACH DELETE w, d
}
CALL () {
  MATCH (d:WebhookDelivery)
  WHERE d.group_id = $shared
  DETACH DELETE d
}
CALL () {
  MATCH (p:Principal {org: $org, id: $id})
  DETACH DELETE p
}
CALL () {
  MATCH (t:Team {org: $org, owner_id: $id})
  SET t.owner_id = $pseudonym
}
RETURN true AS done
