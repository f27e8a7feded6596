MATCH (t:Team {org: $org, name: $team})
OPTIONAL MATCH (:Principal {org: $org, id: $principal})-[m:MEMBER_OF]->(t)
DELETE m
RETURN DISTINCT t.name AS name
