// Queue again, for a fresh extraction, the episodes of $group_id that episode_context_users
// returned (and episode_unlink detached): attempts 0, no context yet, and without the
// vector of their content read after the turn before it, which may be the one that goes.
MATCH (d:Episodic)
WHERE d.uuid IN $uuids AND d.group_id = $group_id
SET d.status = 'queued', d.attempts = 0, d.last_error = '', d.retry_at = null, d.lease_owner = null,
    d.lease_expires_at = null, d.entity_edges = [], d.context_episodes = [],
    d.turn_embedding = null, d.turn_weight = null
