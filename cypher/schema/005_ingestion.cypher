// The ingestion queue: workers look for the episodes not yet done or failed, in the
// spaces of their scope (a group_id prefix).
CREATE INDEX episode_status_group IF NOT EXISTS FOR (n:Episodic) ON (n.status, n.group_id);
