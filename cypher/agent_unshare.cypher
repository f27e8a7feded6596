MATCH (a:Agent {id: $agent})
OPTIONAL MATCH (a)-[s:SHARED_WITH]->(:Principal {id: $principal})
DELETE s
RETURN DISTINCT a.id AS id
