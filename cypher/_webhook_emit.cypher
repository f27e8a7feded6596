// The outbox: one pending delivery of the event ev (a map: id, kind, group_id,
// subject, agent, memory, actor, space, reason, at) for each webhook subscribed to its kind
// and its space, created in the transaction of the change it reports. Whether the
// subscriber may still see the space is checked when it is sent. Used inside
// CALL (ev) { ... }; with no webhook it writes nothing. The webhooks are found by the
// indexes on follow0 and follow1 (a webhook's group_ids), not by reading them all.
  CALL (ev) {
    MATCH (w:Webhook {follow0: ev.group_id}) RETURN w
    UNION
    MATCH (w:Webhook {follow1: ev.group_id}) RETURN w
  }
  WITH ev, w
  WHERE ev.kind IN w.events
  CREATE (:WebhookDelivery {id: randomUUID(), event_id: ev.id, webhook_id: w.id, org: w.org, requester: w.requester, kind: ev.kind,
          group_id: ev.group_id, subject: ev.subject, agent: ev.agent, memory: ev.memory, actor: ev.actor,
          space: ev.space, reason: ev.reason, at: ev.at, status: 'pending', next_at: ev.at,
          attempt_at: [], attempt_status: [], attempt_error: [], attempt_ms: []})
