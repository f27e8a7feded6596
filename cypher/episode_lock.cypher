// Take one episode's write lock for the rest of the transaction; the caller then reads
// it again with a fresh MATCH (episode_get), which sees what a transaction that held
// the lock before committed.
MATCH (e:Episodic {uuid: $uuid})
SET e._lock = true
REMOVE e._lock
RETURN count(e) AS locked
