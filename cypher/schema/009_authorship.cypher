// Who wrote a memory's current content (content_agent): the agent, for what its
// owner wrote; '' for a promoted copy, a memory another requester changed, or one
// whose agent was erased. Memories and versions written before it existed get it
// from what they record: the agent's, unless a copy or last changed by someone other
// than the requester who wrote it. Only unset ones are touched, so this may run again.
MATCH (e:Episodic)
WHERE e.content_agent IS NULL AND e.agent_id IS NOT NULL
SET e.content_agent = CASE WHEN coalesce(e.promoted_from, '') = '' AND coalesce(e.updated_by, '') IN ['', e.requester_id]
  THEN e.agent_id ELSE '' END;
MATCH (v:MemoryVersion)
WHERE v.content_agent IS NULL AND v.agent_id IS NOT NULL
SET v.content_agent = CASE WHEN coalesce(v.promoted_from, '') = '' AND coalesce(v.updated_by, '') IN ['', v.requester_id]
  THEN v.agent_id ELSE '' END;
// A team's dissolution and an agent's erasure find memories by agent.
CREATE INDEX episode_agent IF NOT EXISTS FOR (n:Episodic) ON (n.agent_id);
