// The sweeper's look-up of memories whose expires_at has passed (episode_expired).
CREATE INDEX episode_expires_at IF NOT EXISTS FOR (n:Episodic) ON (n.expires_at);
