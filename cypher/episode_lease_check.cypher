// Lock the episode and report whether worker still holds its lease.
MATCH (e:Episodic {uuid: $uuid})
SET e._lock = $worker
WITH e, e.status = 'processing' AND e.lease_owner = $worker AS held
REMOVE e._lock
RETURN held
