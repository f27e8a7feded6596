// Set the entity and edge types of an agent's spaces (on the agent) or of a team's
// space (on the team): lists of names, or null for all of the deployment's. They go
// with the agent or team when it is erased or dissolved. No row: no such agent or team.
OPTIONAL MATCH (a:Agent {org: $org, id: $agent})
OPTIONAL MATCH (t:Team {org: $org, name: $team})
WITH coalesce(a, t) AS n
WHERE n IS NOT NULL
SET n.entity_types = $entity_types, n.edge_types = $edge_types
RETURN count(n) AS set
