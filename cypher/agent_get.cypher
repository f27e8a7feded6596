// An agent with its share grants and its delegations, the lapsed ones too (expired).
// CYPHER replan=skip: the plan Neo4j made first is kept when the statistics change;
// planning this query costs about 0.15 s of Neo4j's CPU, and it starts from unique
// constraints or group_id indexes whatever the statistics (docs/architecture.md,
// "Plans kept").
CYPHER replan=skip
MATCH (a:Agent {org: $org, id: $id})
RETURN a, {{agent_shares}} AS shares, {{agent_delegates}} AS delegates
