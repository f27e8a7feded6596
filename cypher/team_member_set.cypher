MATCH (t:Team {org: $org, name: $team})
MERGE (p:Principal {org: $org, id: $principal})
ON CREATE SET p.promoter = false
MERGE (p)-[m:MEMBER_OF]->(t)
SET m.role = $role
RETURN t.name AS name
