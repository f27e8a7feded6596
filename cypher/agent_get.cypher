// An agent with its share grants and its delegations, the lapsed ones too (expired).
MATCH (a:Agent {org: $org, id: $id})
RETURN a, {{agent_shares}} AS shares, {{agent_delegates}} AS delegates
