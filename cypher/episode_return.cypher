// Hand a claimed episode back untouched (the process is shutting down): queued again
// at once, the attempt not counted but what it cost ($cost) added to the episode's;
// only by the worker that holds the lease (read under the lock, as in episode_claim).
MATCH (e:Episodic {uuid: $uuid})
SET e._lock = $worker
WITH e, e.status = 'processing' AND e.lease_owner = $worker AS held
REMOVE e._lock
WITH e, held
WHERE held
SET e.status = 'queued', e.attempts = e.attempts - 1, e.retry_at = null,
    e.lease_owner = null, e.lease_expires_at = null
WITH e, $cost AS cost
{{cost_add}}
RETURN e.uuid AS uuid
