// Whether x (an :Episodic or a :MemoryVersion) holds its agent's own words for owner,
// the agent's owner now: graph.Episode.OwnWords, which a test runs the same cases
// through. x and owner are in scope where it is included.
(coalesce(x.content_agent, '') <> '' AND x.content_agent = x.agent_id
 AND CASE WHEN coalesce(x.updated_by, '') <> '' THEN x.updated_by ELSE x.requester_id END = owner)
