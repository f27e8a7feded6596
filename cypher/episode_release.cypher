// A failed attempt: queued again to be retried at $retry_at, or failed for good.
MATCH (e:Episodic {uuid: $uuid})
SET e._lock = $worker
WITH e
WHERE e.status = 'processing' AND e.lease_owner = $worker
SET e.status = CASE WHEN $retry_at IS NULL THEN 'failed' ELSE 'queued' END,
    e.retry_at = $retry_at, e.last_error = $reason, e.lease_owner = null, e.lease_expires_at = null
REMOVE e._lock
RETURN e.uuid AS uuid
