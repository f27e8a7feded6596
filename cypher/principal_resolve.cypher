// Everything the Authorizer needs about one requester, in one round trip.
OPTIONAL MATCH (p:Principal {id: $id})
RETURN coalesce(p.promoter, false) AS promoter,
       COLLECT { MATCH (p)-[m:MEMBER_OF]->(t:Team) RETURN [t.name, m.role] } AS teams,
       COLLECT { MATCH (a:Agent {owner_id: $id}) RETURN a.id } AS owns,
       COLLECT { MATCH (s:Agent)-[:SHARED_WITH]->(p) RETURN s.id } AS shared
