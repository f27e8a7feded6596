// The memories of a team's space by creating agent: agent is null for those whose
// agent no longer exists (or that name none: Graphiti wrote them).
MATCH (e:Episodic)
WHERE e.group_id = $group_id
RETURN CASE WHEN EXISTS { MATCH (:Agent {id: e.agent_id}) } THEN e.agent_id END AS agent, count(e) AS memories
