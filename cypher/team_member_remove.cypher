MATCH (t:Team {name: $team})
OPTIONAL MATCH (:Principal {id: $principal})-[m:MEMBER_OF]->(t)
DELETE m
RETURN DISTINCT t.name AS name
