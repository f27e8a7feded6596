// A team's dissolution and an agent's erasure find memories by agent (content_agent,
// which authorship_backfill derives for memories written before it existed).
CREATE INDEX episode_agent IF NOT EXISTS FOR (n:Episodic) ON (n.agent_id);
