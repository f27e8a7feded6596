// One entity by id, only when it lies in the requester's visible set.
MATCH (n:Entity {uuid: $uuid})
WHERE (n.group_id IN $group_ids OR ($any_agent_public AND n.group_id STARTS WITH $public_prefix AND n.group_id ENDS WITH '-public'))
  AND (n.supported_until IS NULL OR n.supported_until > datetime())
RETURN {{entity_row}}
