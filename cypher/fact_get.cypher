// One fact by id, with its two entities, only when it lies in the requester's visible set.
MATCH (:Entity)-[r:RELATES_TO {uuid: $uuid}]->(:Entity)
WHERE (r.group_id IN $group_ids OR ($any_agent_public AND r.group_id STARTS WITH $public_prefix AND r.group_id ENDS WITH '-public'))
  AND (r.supported_until IS NULL OR r.supported_until > datetime())
RETURN {{fact_row}}
