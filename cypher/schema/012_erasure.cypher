// Erasing a person (requester_records) finds what it wrote, changed, promoted or
// resolved outside the spaces it empties by these properties, one index seek each,
// rather than by reading every memory and version of the database. Only requester_id
// and host_key are set on every memory; the others (null until a change) cost writes
// nothing.
CREATE INDEX episode_requester IF NOT EXISTS FOR (n:Episodic) ON (n.requester_id);
CREATE INDEX episode_host_key IF NOT EXISTS FOR (n:Episodic) ON (n.host_key);
CREATE INDEX episode_updated_by IF NOT EXISTS FOR (n:Episodic) ON (n.updated_by);
CREATE INDEX episode_promoted_by IF NOT EXISTS FOR (n:Episodic) ON (n.promoted_by);
CREATE INDEX episode_promoted_from IF NOT EXISTS FOR (n:Episodic) ON (n.promoted_from_group_id);
CREATE INDEX version_requester IF NOT EXISTS FOR (n:MemoryVersion) ON (n.requester_id);
CREATE INDEX version_host_key IF NOT EXISTS FOR (n:MemoryVersion) ON (n.host_key);
CREATE INDEX version_updated_by IF NOT EXISTS FOR (n:MemoryVersion) ON (n.updated_by);
CREATE INDEX version_promoted_by IF NOT EXISTS FOR (n:MemoryVersion) ON (n.promoted_by);
CREATE INDEX version_replaced_by IF NOT EXISTS FOR (n:MemoryVersion) ON (n.replaced_by);
CREATE INDEX version_promoted_from IF NOT EXISTS FOR (n:MemoryVersion) ON (n.promoted_from_group_id);
CREATE INDEX conflict_resolved_by IF NOT EXISTS FOR (n:Conflict) ON (n.resolved_by);
// requester_audit_rewrite finds the deliveries of each audit event it rewrites.
CREATE INDEX webhook_delivery_event IF NOT EXISTS FOR (d:WebhookDelivery) ON (d.event_id);
