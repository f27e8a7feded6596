// A webhook's deliveries, newest first: only those about spaces the requester sees
// ($group_ids, and any agent's public space with $any_agent_public).
MATCH (d:WebhookDelivery {webhook_id: $id})
WHERE d.org = $org
  AND (d.group_id IN $group_ids OR ($any_agent_public AND d.group_id STARTS WITH $public_prefix AND d.group_id ENDS WITH '-public'))
RETURN d
ORDER BY d.at DESC, d.id DESC
LIMIT $limit
