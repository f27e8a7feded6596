// The memories of a team's space by the agent each goes back to when the team is
// dissolved: the agent whose owner wrote its current content (content_agent, never
// set on a promoted copy nor kept by another requester's change), if that agent still
// exists and was created before the memory. agent is null for the rest, which are
// erased.
MATCH (e:Episodic)
WHERE e.group_id = $group_id
OPTIONAL MATCH (a:Agent {org: $org, id: e.content_agent})
WHERE e.agent_id = e.content_agent AND a.created_at <= e.created_at
RETURN a.id AS agent, collect(e.uuid) AS memories
