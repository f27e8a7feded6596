// Put a failed episode the requester can see back in the queue.
MATCH (e:Episodic {uuid: $uuid})
WHERE e.group_id IN $group_ids OR ($any_agent_public AND e.group_id STARTS WITH $public_prefix AND e.group_id ENDS WITH '-public')
SET e._lock = true
WITH e
WITH e, e.status AS was
SET e.status = CASE WHEN was = 'failed' THEN 'queued' ELSE was END,
    e.attempts = CASE WHEN was = 'failed' THEN 0 ELSE e.attempts END
REMOVE e._lock
RETURN e, was
