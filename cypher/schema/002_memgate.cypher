// memgate's own labels: who owns what, who belongs where, what was refused.
CREATE CONSTRAINT agent_id IF NOT EXISTS FOR (n:Agent) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT team_name IF NOT EXISTS FOR (n:Team) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT principal_id IF NOT EXISTS FOR (n:Principal) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT audit_event_id IF NOT EXISTS FOR (n:AuditEvent) REQUIRE n.id IS UNIQUE;
CREATE INDEX audit_event_at IF NOT EXISTS FOR (n:AuditEvent) ON (n.at);
CREATE CONSTRAINT schema_version_id IF NOT EXISTS FOR (n:MemgateSchema) REQUIRE n.id IS UNIQUE;
