// One episode by id, only when it lies in the requester's visible set.
MATCH (e:Episodic {uuid: $uuid})
WHERE e.group_id IN $group_ids OR ($any_agent_public AND e.group_id STARTS WITH 'agent-' AND e.group_id ENDS WITH '-public')
RETURN e
