CREATE (t:Team {name: $name, created_at: $created_at})
