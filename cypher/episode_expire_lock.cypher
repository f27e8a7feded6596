// The first statement of erasing one expired memory (episode_delete is the second, in
// the same transaction). It takes the episode's write lock, then reads it again by a
// new MATCH (see episode_claim): of two sweepers erasing the same memory, the second
// waits for the first and then finds nothing, so nothing is erased or audited twice.
// Returns the episode while it is still there and expired.
OPTIONAL MATCH (x:Episodic {uuid: $uuid})
WHERE x.expires_at <= datetime()
SET x._lock = true
REMOVE x._lock
WITH count(x) AS locked
MATCH (e:Episodic {uuid: $uuid})
WHERE e.expires_at <= datetime()
RETURN e
