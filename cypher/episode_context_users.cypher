// The episodes of $group_id extracted with episode $uuid among their context (the
// space's earlier episodes an extraction is shown, episode_claim): what they derived
// may hold its words. Called when $uuid leaves the space, changes or goes; each one
// returned is detached from what it derived (episode_unlink) and then queued again by
// episode_requeue_context_users, to be extracted from the space as it is now.
MATCH (d:Episodic)
WHERE d.group_id = $group_id AND d.status = 'done' AND $uuid IN coalesce(d.context_episodes, [])
  AND d.uuid <> $uuid AND coalesce(d.extract, true)
RETURN d.uuid AS uuid
