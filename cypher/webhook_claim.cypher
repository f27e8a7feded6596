// Lease up to $n pending deliveries that are due, to webhooks of requesters whose id
// contains $scope ('' all: tests scope their deliverers so), the longest due first, to
// $worker until $lease_until. Ordered as the index webhook_delivery_due is (status, then
// next_at), so the planner reads the due deliveries in its order and stops at $n: a claim
// costs what it takes, not what is pending (ORDER BY next_at alone sorted them all). As
// in episode_claim, each candidate's write lock is taken and only then is it read again,
// so of two deliverers racing for one delivery the second sees the first's lease: each
// is sent by one process at a time.
CALL () {
  MATCH (c:WebhookDelivery)
  WHERE c.status = 'pending' AND c.next_at <= $now AND c.requester CONTAINS $scope
    AND (c.lease_expires_at IS NULL OR c.lease_expires_at < $now)
  RETURN c.id AS id
  ORDER BY c.status ASC, c.next_at ASC
  LIMIT $n
}
MATCH (d:WebhookDelivery {id: id})
SET d._lock = $worker
WITH d, d.status = 'pending' AND (d.lease_expires_at IS NULL OR d.lease_expires_at < $now) AS free
REMOVE d._lock
WITH d, free
WHERE free
SET d.lease_owner = $worker, d.lease_expires_at = $lease_until
WITH d
MATCH (w:Webhook {id: d.webhook_id})
RETURN d, w
