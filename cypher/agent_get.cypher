// An agent with its share grants, the lapsed ones too (expired).
MATCH (a:Agent {org: $org, id: $id})
RETURN a, {{agent_shares}} AS shares
