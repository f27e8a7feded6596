// Record one attempt ($attempt: at, status, error, ms; null for none) of a delivery
// $worker holds the lease of, and its new state: $status (pending again at $next,
// delivered, failed or dropped). The newest $keep attempts are kept. A failed
// delivery marks its webhook failing; a delivered one, active again.
MATCH (d:WebhookDelivery {id: $id})
SET d._lock = $worker
WITH d, d.lease_owner = $worker AS held
REMOVE d._lock
WITH d, held
WHERE held
SET d.status = $status, d.next_at = $next, d.lease_owner = null, d.lease_expires_at = null
FOREACH (a IN CASE WHEN $attempt IS NULL THEN [] ELSE [$attempt] END |
  SET d.attempt_at = (d.attempt_at + [a.at])[-$keep..],
      d.attempt_status = (d.attempt_status + [a.status])[-$keep..],
      d.attempt_error = (d.attempt_error + [a.error])[-$keep..],
      d.attempt_ms = (d.attempt_ms + [a.ms])[-$keep..])
WITH d
OPTIONAL MATCH (w:Webhook {id: d.webhook_id})
FOREACH (x IN CASE WHEN w IS NOT NULL AND $status = 'failed' THEN [w] ELSE [] END |
  SET x.status = 'failing', x.failing_at = $now)
FOREACH (x IN CASE WHEN w IS NOT NULL AND $status = 'delivered' THEN [w] ELSE [] END |
  SET x.status = 'active', x.failing_at = null)
RETURN d.id AS id
