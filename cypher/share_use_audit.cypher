// Mark the first use of one lapsed grant, a read by the former grantee about the agent,
// as audited, so that of the reads after the lapse (in any number of processes) only
// one audits it. use_audited holds the expires_at of the lapse whose use was audited: a
// grant renewed and lapsed again has another expires_at, and its use is audited afresh.
// An audited grant is not locked again; an unaudited one is locked first (SET _lock),
// then read again by a new MATCH, which sees another reader's mark once that one has
// committed (share_lapse).
MATCH (:Agent {org: $org, id: $agent})-[s:SHARED_WITH]->(:Principal {org: $org, id: $principal})
WHERE s.expires_at <= datetime() AND (s.use_audited IS NULL OR s.use_audited <> s.expires_at)
SET s._lock = true
REMOVE s._lock
WITH count(*) AS locked
WHERE locked > 0
MATCH (:Agent {org: $org, id: $agent})-[s:SHARED_WITH]->(:Principal {org: $org, id: $principal})
WHERE s.expires_at <= datetime() AND (s.use_audited IS NULL OR s.use_audited <> s.expires_at)
SET s.use_audited = s.expires_at
RETURN s.expires_at AS expires_at
