// The memories of a team's space by the agent each goes back to when the team is
// dissolved: the agent whose own words it holds (_own_words: its content written by
// the agent's owner as it is now, never a promoted copy, nor one another requester
// changed, nor one its former owner wrote before a transfer), if that agent still
// exists and was created before the memory; with that agent's owner, whose words its
// versions must be to follow it. agent is null for the rest, which are erased.
MATCH (x:Episodic)
WHERE x.group_id = $group_id
OPTIONAL MATCH (a:Agent {org: $org, id: x.content_agent})
WHERE a.created_at <= x.created_at
WITH x, a, a.owner_id AS owner
WITH x, CASE WHEN a IS NOT NULL AND {{own_words}} THEN a END AS a
RETURN a.id AS agent, a.owner_id AS owner, collect(x.uuid) AS memories
