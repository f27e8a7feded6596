CREATE (t:Team {org: $org, name: $name, created_at: $created_at, owner_id: $owner_id})
