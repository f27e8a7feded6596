// A new owner starts with no shares and no delegations: grants were the previous
// owner's to make.
MATCH (a:Agent {org: $org, id: $id})
WHERE a.owner_id = $expected_owner
SET a.owner_id = $owner_id
WITH a
OPTIONAL MATCH (a)-[s:SHARED_WITH|DELEGATED_TO]->(:Principal)
DELETE s
RETURN DISTINCT a.id AS id
