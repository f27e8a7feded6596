// Grant a requester the right to write an agent's memories in its own spaces ($role:
// writer), until $expires_at (null: until revoked), if the agent's owner is still the
// one the decision was made on. Granting again sets the new role and end. A delegation
// gives no read access; principal_resolve reads it apart from shares.
MATCH (a:Agent {org: $org, id: $agent})
WHERE a.owner_id = $expected_owner AND a.owner_id <> $principal
MERGE (p:Principal {org: $org, id: $principal})
ON CREATE SET p.promoter = false
MERGE (a)-[d:DELEGATED_TO]->(p)
ON CREATE SET d.granted_at = datetime()
SET d.role = $role, d.expires_at = $expires_at
RETURN a.id AS id
