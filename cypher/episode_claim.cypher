// Lease up to $n episodes in one transaction. Candidates: per group_id the oldest
// episode not yet done or failed, when it is queued (and due) or its lease expired;
// of the oldest $window of them, $n at random: processes claiming at the same moment
// then seldom choose the same candidates, and seldom wait for each other's locks (all
// choosing the oldest $n made every concurrent claim wait for the first and then find
// its candidates taken). The chosen are locked oldest first, so two claims never take
// each other's locks in opposite orders. Then each candidate's write lock is taken
// (SET _lock) and only then is it read again, by a new MATCH, so of two workers racing
// for one episode the second sees the first's claim: nothing read before the lock can
// be served from a cache.
// Each must still be due, the oldest unfinished episode of its space, and the only one
// of its space in progress, so a space is processed strictly in order. The lock
// property is removed whatever the outcome; the lock itself holds until the
// transaction ends.
CALL () {
  MATCH (c:Episodic)
  USING INDEX c:Episodic(status, group_id)
  WHERE c.status IN ['queued', 'processing'] AND c.group_id STARTS WITH $scope
  WITH c ORDER BY c.created_at ASC, c.uuid ASC
  WITH c.group_id AS g, collect(c)[0] AS head
  WHERE (head.status = 'queued' AND (head.retry_at IS NULL OR head.retry_at <= $now))
     OR (head.status = 'processing' AND head.lease_expires_at < $now)
  RETURN head.uuid AS id, head.created_at AS created
  ORDER BY head.created_at ASC
  LIMIT $window
}
WITH id, created ORDER BY rand() LIMIT $n
WITH id ORDER BY created ASC, id ASC
MATCH (e:Episodic {uuid: id})
SET e._lock = $worker
WITH e,
     ((e.status = 'queued' AND (e.retry_at IS NULL OR e.retry_at <= $now))
      OR (e.status = 'processing' AND e.lease_expires_at < $now))
     AND NOT EXISTS {
       MATCH (o:Episodic)
       USING INDEX o:Episodic(group_id, status, created_at)
       WHERE o.group_id = e.group_id AND o.status IN ['queued', 'processing'] AND o.created_at <= e.created_at
         AND o <> e AND (o.created_at < e.created_at OR o.uuid < e.uuid)
     }
     AND NOT EXISTS {
       MATCH (o:Episodic)
       USING INDEX o:Episodic(group_id, status, created_at)
       WHERE o.group_id = e.group_id AND o.status = 'processing' AND o.created_at IS NOT NULL
         AND o <> e AND o.lease_expires_at >= $now
     } AS claimable
REMOVE e._lock
// A candidate no longer claimable was taken (or changed) by another worker between the
// two reads: it comes back with claimable false, so the claimer can count the conflict.
WITH e, claimable
FOREACH (_ IN CASE WHEN claimable THEN [1] ELSE [] END |
  SET e.status = 'processing', e.lease_owner = $worker, e.lease_expires_at = $lease_until,
      e.attempts = coalesce(e.attempts, 0) + 1, e.retry_at = null)
// The context of the extraction comes along: the space's latest processed episodes
// (ordered by all the index's columns, so Neo4j reads the index backwards and stops
// after $context instead of sorting the space's history); never one stored without
// extraction (its words reach no model and name no entity) or one that has expired.
RETURN claimable, e, CASE WHEN claimable THEN COLLECT {
  MATCH (p:Episodic)
  USING INDEX p:Episodic(group_id, status, created_at)
  WHERE p.group_id = e.group_id AND p.status = 'done' AND p.created_at < e.created_at
    AND coalesce(p.extract, true) AND (p.expires_at IS NULL OR p.expires_at > $now)
  RETURN p ORDER BY p.group_id DESC, p.status DESC, p.created_at DESC LIMIT $context
} ELSE [] END AS previous
