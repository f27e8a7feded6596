// Erase an agent and both of its spaces: every episode and its versions, entity,
// fact, mention and conflict. What the agent wrote elsewhere (a team's, the global or
// its owner's shared space, all of its organization) stays there, its agent_id kept as a record, but is no
// longer its agent's own: content_agent '' (in its versions too), so it never goes
// back to an agent, one created later with this id included.
// Runs after agent_erase_lock in one transaction, and reads the spaces again under
// its locks.
MATCH (a:Agent {org: $org, id: $id})
WHERE a.owner_id = $expected_owner
CALL (a) {
  MATCH (x:Episodic {agent_id: a.id})
  WHERE NOT x.group_id IN $group_ids
    AND CASE $org_prefix WHEN '' THEN NOT x.group_id STARTS WITH 'org-' ELSE x.group_id STARTS WITH $org_prefix END
  OPTIONAL MATCH (x)-[:HAS_VERSION]->(v:MemoryVersion)
  SET v.content_agent = ''
  WITH DISTINCT x
  SET x.content_agent = ''
}
OPTIONAL MATCH (e:Episodic) WHERE e.group_id IN $group_ids
OPTIONAL MATCH (e)-[:HAS_VERSION]->(v:MemoryVersion)
WITH a, collect(DISTINCT e) AS episodes, collect(v) AS versions
OPTIONAL MATCH (n:Entity) WHERE n.group_id IN $group_ids
WITH a, episodes, versions, collect(n) AS entities
OPTIONAL MATCH (c:Conflict) WHERE c.group_id IN $group_ids
WITH a, episodes, versions, entities, collect(c) AS conflicts
FOREACH (x IN versions | DETACH DELETE x)
FOREACH (x IN episodes | DETACH DELETE x)
FOREACH (x IN entities | DETACH DELETE x)
FOREACH (x IN conflicts | DETACH DELETE x)
DETACH DELETE a
// The webhooks following the agent, and every delivery about its spaces: nothing about
// them is sent after the erasure.
WITH episodes
CALL () {
  MATCH (w:Webhook {org: $org, agent: $id})
  OPTIONAL MATCH (d:WebhookDelivery {webhook_id: w.id})
  DETACH DELETE w, d
}
CALL () {
  MATCH (d:WebhookDelivery)
  WHERE d.group_id IN $group_ids
  DETACH DELETE d
}
RETURN size(episodes) AS episodes
