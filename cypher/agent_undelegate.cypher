// Revoke a requester's delegation of an agent, if the agent's owner is still the one
// the decision was made on; revoking one that does not exist changes nothing.
MATCH (a:Agent {org: $org, id: $agent})
WHERE a.owner_id = $expected_owner
OPTIONAL MATCH (a)-[d:DELEGATED_TO]->(:Principal {org: $org, id: $principal})
DELETE d
RETURN DISTINCT a.id AS id
