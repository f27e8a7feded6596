// A webhook of organization $org. One following an agent ($agent) or a team ($team)
// is created only while it exists (its write lock taken, then looked up again, as
// space_hold does), so an erasure either waits and deletes it too or has committed.
OPTIONAL MATCH (a:Agent {org: $org, id: $agent})
SET a._lock = true
REMOVE a._lock
WITH a
OPTIONAL MATCH (t:Team {org: $org, name: $team})
SET t._lock = true
REMOVE t._lock
WITH t
WHERE ($agent IS NULL OR EXISTS { MATCH (:Agent {org: $org, id: $agent}) })
  AND ($team IS NULL OR EXISTS { MATCH (:Team {org: $org, name: $team}) })
CREATE (w:Webhook {id: $id, org: $org, url: $url, events: $events, agent: $agent, team: $team, audit: $audit,
                   requester: $requester, host_key: $host_key, content: $content, group_ids: $group_ids,
                   follow0: $group_ids[0], follow1: $group_ids[1],
                   secret: $secret, status: 'active', created_at: $now})
RETURN w
