// Up to $limit memories whose expires_at has passed, the longest expired first: the
// sweeper's work list. Each is erased in a transaction of its own (episode_expire_lock).
MATCH (e:Episodic)
WHERE e.expires_at <= datetime()
RETURN e.uuid AS uuid
ORDER BY e.expires_at
LIMIT $limit
