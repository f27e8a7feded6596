// An audit event lives in its organization's system space, which no memory query reads.
CREATE (a:AuditEvent {id: $id, kind: $kind, at: $at, actor: $actor, subject: $subject,
                      host_key: $host_key, space: $space, reason: $reason, request_id: $request_id,
                      asserted_teams: $asserted_teams, group_id: $group_id})
// access.denied for every refusal (namespace_denied), to the organization's audit
// webhooks (webhook_emit): the event's own id, so a receiver can find it in /v1/audit.
WITH a
CALL (a) {
  WITH a
  WHERE a.kind = 'namespace_denied'
  WITH {id: a.id, kind: 'access.denied', group_id: a.group_id, subject: a.subject, actor: a.actor,
        reason: a.reason, space: a.space, at: a.at} AS ev
  CALL (ev) {
{{webhook_emit}}
  }
}
