// Write back the audit events of a requester's erasure with its id replaced by its
// pseudonym ($events: the fields requester_audit_events read, rewritten); kind and
// time stay.
UNWIND $events AS ev
MATCH (a:AuditEvent {id: ev.id})
WHERE a.group_id = $system
SET a.actor = ev.actor, a.subject = ev.subject, a.host_key = ev.host_key, a.space = ev.space, a.reason = ev.reason
WITH a, ev
CALL (ev) {
  // The event's deliveries to audit webhooks (access.denied) carry the same fields,
  // sent or still to be sent: rewritten alike.
  MATCH (d:WebhookDelivery {event_id: ev.id})
  WHERE d.group_id = $system
  SET d.actor = ev.actor, d.subject = ev.subject, d.space = ev.space, d.reason = ev.reason
}
RETURN count(a) AS rewritten
