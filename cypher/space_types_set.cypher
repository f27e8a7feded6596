// Set the entity and edge types of an agent's spaces (on the agent) or of a team's
// space (on the team): lists of names, or null for all of the deployment's. They go
// with the agent or team when it is erased or dissolved. Only on the agent or team
// the request's decision read: created at $created_at, and (an agent) still owned by
// $expected_owner; one erased or dissolved and made again since, or an agent given to
// another owner, is left as it is (same: false). No row: no such agent or team.
OPTIONAL MATCH (a:Agent {org: $org, id: $agent})
OPTIONAL MATCH (t:Team {org: $org, name: $team})
WITH coalesce(a, t) AS n
WHERE n IS NOT NULL
WITH n, n.created_at = $created_at AND ($expected_owner IS NULL OR n.owner_id = $expected_owner) AS same
FOREACH (_ IN CASE WHEN same THEN [1] ELSE [] END |
  SET n.entity_types = $entity_types, n.edge_types = $edge_types)
RETURN same
