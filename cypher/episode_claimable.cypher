// Candidates to claim: per group_id the oldest episode not yet done or failed, when it
// is queued (and due) or its lease expired. episode_claim checks again under a lock.
MATCH (e:Episodic)
WHERE e.status IN ['queued', 'processing'] AND e.group_id STARTS WITH $scope
WITH e ORDER BY e.created_at ASC, e.uuid ASC
WITH e.group_id AS g, collect(e)[0] AS head
WHERE (head.status = 'queued' AND (head.retry_at IS NULL OR head.retry_at <= $now))
   OR (head.status = 'processing' AND head.lease_expires_at < $now)
RETURN head.uuid AS uuid
ORDER BY head.created_at ASC
LIMIT $n
