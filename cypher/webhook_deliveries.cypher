// A webhook's deliveries, newest first: only those about spaces the requester sees
// ($group_ids, and any agent's public space with $any_agent_public). Each is read under
// its write lock, taken in id order as webhook_finish takes it: Neo4j applies a commit
// to the store record by record, and a plain read of a delivery that a finish is
// committing can see some of its properties written and others not (a new status and
// attempt_at with the old attempt_status and attempt_error: an attempt with no answer).
// The lock waits for that finish to end; the deliveries are then matched again, so
// nothing read before the lock is used.
CALL () {
  MATCH (c:WebhookDelivery {webhook_id: $id})
  WHERE c.org = $org
    AND (c.group_id IN $group_ids OR ($any_agent_public AND c.group_id STARTS WITH $public_prefix AND c.group_id ENDS WITH '-public'))
  RETURN c.id AS did
  ORDER BY c.at DESC, c.id DESC
  LIMIT $limit
}
WITH did ORDER BY did
MATCH (l:WebhookDelivery {id: did})
SET l._lock = true
REMOVE l._lock
WITH did
MATCH (d:WebhookDelivery {id: did})
WHERE d.webhook_id = $id AND d.org = $org
  AND (d.group_id IN $group_ids OR ($any_agent_public AND d.group_id STARTS WITH $public_prefix AND d.group_id ENDS WITH '-public'))
RETURN d
ORDER BY d.at DESC, d.id DESC
