// Everything the Authorizer needs about one requester, in one round trip.
OPTIONAL MATCH (p:Principal {id: $id})
OPTIONAL MATCH (p)-[m:MEMBER_OF]->(t:Team)
WITH p, collect(CASE WHEN t IS NULL THEN null ELSE [t.name, m.role] END) AS teams
OPTIONAL MATCH (own:Agent {owner_id: $id})
WITH p, teams, collect(own.id) AS owns
OPTIONAL MATCH (shared:Agent)-[:SHARED_WITH]->(p)
RETURN coalesce(p.promoter, false) AS promoter, teams, owns, collect(shared.id) AS shared
