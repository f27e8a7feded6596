// The ingestion queue: workers look for the episodes not yet done or failed.
CREATE INDEX episode_status IF NOT EXISTS FOR (n:Episodic) ON (n.status);
