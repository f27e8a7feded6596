// The episode an earlier request with the same (hashed) idempotency key stored.
MATCH (e:Episodic {idempotency_key: $key})
WHERE e.group_id IN $group_ids OR ($any_agent_public AND e.group_id STARTS WITH 'agent-' AND e.group_id ENDS WITH '-public')
RETURN e
