MATCH (a:Agent {id: $agent})
MERGE (p:Principal {id: $principal})
ON CREATE SET p.promoter = false
MERGE (a)-[s:SHARED_WITH]->(p)
ON CREATE SET s.granted_at = datetime()
RETURN a.id AS id
