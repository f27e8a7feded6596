// An audit event lives in its organization's system space, which no memory query reads.
CREATE (a:AuditEvent {id: $id, kind: $kind, at: $at, actor: $actor, subject: $subject,
                      host_key: $host_key, space: $space, reason: $reason, request_id: $request_id,
                      asserted_teams: $asserted_teams, group_id: $group_id})
