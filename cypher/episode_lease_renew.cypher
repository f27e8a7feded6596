// Extend worker's lease, if it still holds it (read under the lock, as in episode_claim).
MATCH (e:Episodic {uuid: $uuid})
SET e._lock = $worker
WITH e, e.status = 'processing' AND e.lease_owner = $worker AS held
REMOVE e._lock
WITH e, held
WHERE held
SET e.lease_expires_at = $lease_until
RETURN e.uuid AS uuid
