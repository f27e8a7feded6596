// Record the attempts of deliveries finished together, in one transaction: per row of
// $rows (id, worker, attempt: {at, status, error, ms} or null for none, status, next),
// only while the row's worker holds the delivery's lease (read under the lock, as in
// episode_claim), its attempt (the newest $keep are kept) and its new state: status
// (pending again at next, delivered, failed or dropped). A failed delivery marks its
// webhook failing; a delivered one, active again (written only when it was not: most
// deliveries leave their webhook untouched). Returns the ids recorded.
UNWIND $rows AS x
MATCH (d:WebhookDelivery {id: x.id})
SET d._lock = x.worker
WITH d, x, d.lease_owner = x.worker AS held
REMOVE d._lock
WITH d, x, held
WHERE held
SET d.status = x.status, d.next_at = x.next, d.lease_owner = null, d.lease_expires_at = null
FOREACH (a IN CASE WHEN x.attempt IS NULL THEN [] ELSE [x.attempt] END |
  SET d.attempt_at = (d.attempt_at + [a.at])[-$keep..],
      d.attempt_status = (d.attempt_status + [a.status])[-$keep..],
      d.attempt_error = (d.attempt_error + [a.error])[-$keep..],
      d.attempt_ms = (d.attempt_ms + [a.ms])[-$keep..])
WITH d, x
OPTIONAL MATCH (w:Webhook {id: d.webhook_id})
FOREACH (y IN CASE WHEN w IS NOT NULL AND x.status = 'failed' THEN [w] ELSE [] END |
  SET y.status = 'failing', y.failing_at = $now)
FOREACH (y IN CASE WHEN w IS NOT NULL AND x.status = 'delivered' AND coalesce(w.status <> 'active', true) THEN [w] ELSE [] END |
  SET y.status = 'active', y.failing_at = null)
RETURN d.id AS id
