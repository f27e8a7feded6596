// Lock the episodes and report which ones worker still holds the lease on (read under
// the lock, as in episode_claim) as they were extracted: still in the space and with
// the content the extraction read ($episodes: {uuid, group_id, content_hash}). A move,
// a rewrite or a dissolution queues an episode again, and the same worker may have
// claimed it again since: the older extraction's result belongs to a space or a text
// the episode no longer has, and is refused.
UNWIND $episodes AS x
MATCH (e:Episodic {uuid: x.uuid})
SET e._lock = $worker
WITH e, e.status = 'processing' AND e.lease_owner = $worker AND e.group_id = x.group_id
        AND coalesce(e.content_hash, '') = x.content_hash AS held
REMOVE e._lock
RETURN e.uuid AS uuid, held
