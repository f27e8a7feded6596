MATCH (e:Episodic {uuid: $uuid})
SET e._lock = $worker
WITH e
WHERE e.status = 'processing' AND e.lease_owner = $worker
SET e.lease_expires_at = $lease_until
REMOVE e._lock
RETURN e.uuid AS uuid
