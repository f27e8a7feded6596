// Write back the audit events of a requester's erasure with its id replaced by its
// pseudonym ($events: the fields requester_audit_events read, rewritten); kind and
// time stay.
UNWIND $events AS ev
MATCH (a:AuditEvent {id: ev.id})
WHERE a.group_id = $system
SET a.actor = ev.actor, a.subject = ev.subject, a.host_key = ev.host_key, a.space = ev.space, a.reason = ev.reason
RETURN count(a) AS rewritten
