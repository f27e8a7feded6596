MATCH (a:Agent {id: $id})
OPTIONAL MATCH (a)-[:SHARED_WITH]->(p:Principal)
RETURN a, collect(p.id) AS shared
