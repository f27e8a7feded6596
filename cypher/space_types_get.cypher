// The entity and edge types the owners of spaces chose for them (graph.SpaceTypes):
// an agent's for its private and public spaces, a team's for its space; null where
// none was chosen (the deployment's apply) or the space has no such owner.
UNWIND $spaces AS s
OPTIONAL MATCH (a:Agent {org: s.org, id: s.agent})
OPTIONAL MATCH (t:Team {org: s.org, name: s.team})
WITH s, coalesce(a, t) AS n
RETURN s.group_id AS group_id, n.entity_types AS entity_types, n.edge_types AS edge_types
