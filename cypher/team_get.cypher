MATCH (t:Team {org: $org, name: $name})
OPTIONAL MATCH (p:Principal)-[m:MEMBER_OF]->(t)
RETURN t, collect(CASE WHEN p IS NULL THEN null ELSE [p.id, m.role] END) AS members
