CREATE (a:Agent {org: $org, id: $id, owner_id: $owner_id, created_at: $created_at})
