// Grant a requester read access to an agent's private space, until $expires_at (null:
// until revoked). Granting again sets the new end and the grant's lapse is audited
// afresh.
MATCH (a:Agent {org: $org, id: $agent})
MERGE (p:Principal {org: $org, id: $principal})
ON CREATE SET p.promoter = false
MERGE (a)-[s:SHARED_WITH]->(p)
ON CREATE SET s.granted_at = datetime()
SET s.expires_at = $expires_at, s.lapse_audited = null
RETURN a.id AS id
