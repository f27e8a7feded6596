// Lock the episodes and report which ones worker still holds the lease on (read under
// the lock, as in episode_claim).
UNWIND $uuids AS id
MATCH (e:Episodic {uuid: id})
SET e._lock = $worker
WITH e, e.status = 'processing' AND e.lease_owner = $worker AS held
REMOVE e._lock
RETURN e.uuid AS uuid, held
