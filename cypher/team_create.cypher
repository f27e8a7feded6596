CREATE (t:Team {name: $name, created_at: $created_at, owner_id: $owner_id})
