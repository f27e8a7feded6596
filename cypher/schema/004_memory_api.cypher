// The memory API: owners resolve principals, idempotency keys are unique per host key
// and requester (hashed together), lists read newest first.
CREATE INDEX agent_owner_id IF NOT EXISTS FOR (n:Agent) ON (n.owner_id);
CREATE CONSTRAINT episode_idempotency_key IF NOT EXISTS FOR (n:Episodic) REQUIRE n.idempotency_key IS UNIQUE;
CREATE INDEX episode_group_created IF NOT EXISTS FOR (n:Episodic) ON (n.group_id, n.created_at);
CREATE INDEX audit_event_subject IF NOT EXISTS FOR (n:AuditEvent) ON (n.subject);
CREATE INDEX audit_event_actor IF NOT EXISTS FOR (n:AuditEvent) ON (n.actor);
CREATE INDEX audit_event_kind IF NOT EXISTS FOR (n:AuditEvent) ON (n.kind);
