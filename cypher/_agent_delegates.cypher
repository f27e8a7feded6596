// An agent's delegations, the lapsed ones too (expired), by principal; a is the agent.
COLLECT {
  MATCH (a)-[d:DELEGATED_TO]->(p:Principal)
  RETURN {principal: p.id, role: d.role, granted_at: d.granted_at, expires_at: d.expires_at,
          expired: coalesce(d.expires_at <= datetime(), false)}
  ORDER BY p.id
}
