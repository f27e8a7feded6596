// An agent's share grants, the lapsed ones too (expired), by principal; a is the agent.
COLLECT {
  MATCH (a)-[s:SHARED_WITH]->(p:Principal)
  RETURN {principal: p.id, granted_at: s.granted_at, expires_at: s.expires_at,
          expired: coalesce(s.expires_at <= datetime(), false)}
  ORDER BY p.id
}
