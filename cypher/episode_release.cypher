// A failed attempt: queued again to be retried at $retry_at, or failed for good, and
// what it cost ($cost) added to the episode's in the same write; only by the worker
// that holds the lease (read under the lock, as in episode_claim).
MATCH (e:Episodic {uuid: $uuid})
SET e._lock = $worker
WITH e, e.status = 'processing' AND e.lease_owner = $worker AS held
REMOVE e._lock
WITH e, held
WHERE held
SET e.status = CASE WHEN $retry_at IS NULL THEN 'failed' ELSE 'queued' END,
    e.retry_at = $retry_at, e.last_error = $reason, e.lease_owner = null, e.lease_expires_at = null
WITH e, $cost AS cost
{{cost_add}}
// memory.failed when it failed for good (webhook_emit); never the reason, which may
// quote the model's answer.
WITH e
CALL (e) {
  WITH e
  WHERE e.status = 'failed'
  WITH {id: randomUUID(), kind: 'memory.failed', group_id: e.group_id, subject: e.uuid, agent: e.agent_id,
        at: datetime()} AS ev
  CALL (ev) {
{{webhook_emit}}
  }
}
RETURN e.uuid AS uuid
