// memgate's own labels: who owns what, who belongs where, what was refused.
// (Agents, teams and requesters are unique within their organization: 010_orgs.)
CREATE CONSTRAINT audit_event_id IF NOT EXISTS FOR (n:AuditEvent) REQUIRE n.id IS UNIQUE;
CREATE INDEX audit_event_at IF NOT EXISTS FOR (n:AuditEvent) ON (n.at);
CREATE CONSTRAINT schema_version_id IF NOT EXISTS FOR (n:MemgateSchema) REQUIRE n.id IS UNIQUE;
