// An agent with its share grants, the lapsed ones too (expired).
MATCH (a:Agent {id: $id})
RETURN a, {{agent_shares}} AS shares
