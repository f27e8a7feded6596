MATCH (a:Agent {org: $org, id: $agent})
OPTIONAL MATCH (a)-[s:SHARED_WITH]->(:Principal {org: $org, id: $principal})
DELETE s
RETURN DISTINCT a.id AS id
