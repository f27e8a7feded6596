// A webhook of organization $org, within its bounds, decided in this transaction: at
// most $limits.per_requester webhooks of the requester, at most $limits.per_target of
// its host key following the same spaces ($group_ids), and none of the host key's
// already sending to the same URL about the same spaces (identical targets are one
// webhook, whichever requester of the key registered it). The requester's principal
// is the lock its webhooks are counted under (made if it has none yet, as a grant
// makes it), so concurrent registrations are counted one after another; the followed
// agent or team is locked too, so the key's webhooks following it are as well. One
// following an agent ($agent) or a team ($team) is created only while it exists (its
// write lock taken, then looked up again, as space_hold does), so an erasure either
// waits and deletes it too or has committed. Answers the webhook, or no webhook and
// the refusal: gone (the agent or team), requester, target or duplicate (with the
// webhook's id when it is the requester's own).
MERGE (p:Principal {org: $org, id: $requester})
SET p._lock = true
REMOVE p._lock
WITH p
OPTIONAL MATCH (a:Agent {org: $org, id: $agent})
SET a._lock = true
REMOVE a._lock
WITH p, a
OPTIONAL MATCH (t:Team {org: $org, name: $team})
SET t._lock = true
REMOVE t._lock
WITH DISTINCT p
CALL () {
  MATCH (x:Webhook {org: $org, requester: $requester})
  RETURN count(x) AS mine
}
CALL () {
  MATCH (x:Webhook {org: $org, host_key: $host_key})
  WHERE x.group_ids = $group_ids
  RETURN count(x) AS keyed, [x IN collect(x) WHERE x.url = $url][0] AS same
}
WITH mine, keyed, CASE WHEN same.requester = $requester THEN same.id END AS duplicate,
     CASE
       WHEN NOT (($agent IS NULL OR EXISTS { MATCH (:Agent {org: $org, id: $agent}) })
                 AND ($team IS NULL OR EXISTS { MATCH (:Team {org: $org, name: $team}) })) THEN 'gone'
       WHEN same IS NOT NULL THEN 'duplicate'
       WHEN mine >= $limits.per_requester THEN 'requester'
       WHEN keyed >= $limits.per_target THEN 'target'
     END AS refused
OPTIONAL CALL (refused) {
  WITH refused WHERE refused IS NULL
  CREATE (w:Webhook {id: $id, org: $org, url: $url, events: $events, agent: $agent, team: $team, audit: $audit,
                     requester: $requester, host_key: $host_key, content: $content, group_ids: $group_ids,
                     follow0: $group_ids[0], follow1: $group_ids[1],
                     secret: $secret, status: 'active', created_at: $now})
  RETURN w
}
RETURN w, refused, duplicate
