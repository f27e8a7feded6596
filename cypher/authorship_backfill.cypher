// Who wrote a memory's current content (content_agent): the agent, for what its
// owner wrote; '' for a promoted copy, a memory another requester changed, or one
// whose agent was erased. Memories and versions stored before memgate recorded it get
// it from what they record: the agent's, unless a copy or last changed by someone
// other than the requester who wrote it. Only unset ones are touched, so Migrate runs
// it at every start, after the schema.
CALL () {
  MATCH (e:Episodic)
  WHERE e.content_agent IS NULL AND e.agent_id IS NOT NULL
  SET e.content_agent = CASE WHEN coalesce(e.promoted_from, '') = '' AND coalesce(e.updated_by, '') IN ['', e.requester_id]
    THEN e.agent_id ELSE '' END
}
CALL () {
  MATCH (v:MemoryVersion)
  WHERE v.content_agent IS NULL AND v.agent_id IS NOT NULL
  SET v.content_agent = CASE WHEN coalesce(v.promoted_from, '') = '' AND coalesce(v.updated_by, '') IN ['', v.requester_id]
    THEN v.agent_id ELSE '' END
}
RETURN true AS done
