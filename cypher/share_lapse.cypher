// Mark one lapsed grant as audited, so that of two sweepers only one audits it: the
// grant's write lock is taken first (SET _lock), then it is read again by a new MATCH,
// which sees the other sweeper's mark once that one has committed (episode_claim).
MATCH (:Agent {org: $org, id: $agent})-[s:SHARED_WITH]->(:Principal {org: $org, id: $principal})
SET s._lock = true
REMOVE s._lock
WITH count(*) AS locked
MATCH (:Agent {org: $org, id: $agent})-[s:SHARED_WITH]->(:Principal {org: $org, id: $principal})
WHERE s.expires_at <= datetime() AND s.lapse_audited IS NULL
SET s.lapse_audited = true
RETURN s.expires_at AS expires_at
