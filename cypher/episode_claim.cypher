// Lease the candidates. The write lock on each is taken first (SET _lock) and only
// then is it read, so of two workers racing for one episode the second sees the
// first's claim: nothing read before the lock can be served from a cache. Each must
// still be due, the oldest unfinished episode of its space, and the only one of its
// space in progress, so a space is processed strictly in order. The lock property is
// removed whatever the outcome; the lock itself holds until the transaction ends.
UNWIND $uuids AS id
MATCH (e:Episodic {uuid: id})
SET e._lock = $worker
WITH e,
     ((e.status = 'queued' AND (e.retry_at IS NULL OR e.retry_at <= $now))
      OR (e.status = 'processing' AND e.lease_expires_at < $now))
     AND NOT EXISTS {
       MATCH (o:Episodic)
       WHERE o.group_id = e.group_id AND o <> e AND o.status IN ['queued', 'processing']
         AND (o.created_at < e.created_at OR (o.created_at = e.created_at AND o.uuid < e.uuid)
              OR (o.status = 'processing' AND o.lease_expires_at >= $now))
     } AS claimable
REMOVE e._lock
WITH e, claimable
WHERE claimable
SET e.status = 'processing', e.lease_owner = $worker, e.lease_expires_at = $lease_until,
    e.attempts = coalesce(e.attempts, 0) + 1, e.retry_at = null
// The context of the extraction comes along: the space's latest processed episodes.
RETURN e, COLLECT {
  MATCH (p:Episodic)
  WHERE p.group_id = e.group_id AND p.status = 'done' AND p.created_at < e.created_at
  RETURN p ORDER BY p.created_at DESC LIMIT $context
} AS previous
