CREATE (a:Agent {id: $id, owner_id: $owner_id, created_at: $created_at})
