// Up to $limit share grants whose expires_at has passed and whose lapse has not been
// audited yet: the sweeper's work list (share_lapse audits each).
MATCH (a:Agent)-[s:SHARED_WITH]->(p:Principal)
WHERE s.expires_at <= datetime() AND s.lapse_audited IS NULL
RETURN a.id AS agent, p.id AS principal, a.org AS org, s.expires_at AS expires_at
LIMIT $limit
