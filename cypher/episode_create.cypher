// One episode, durable with status queued before the client hears 202. group_id is
// set last so that it heads the node's property chain (see episodeParams).
// An agent's space is written only while the agent exists: its write lock is taken
// first and the agent looked up again under it, so an erasure (agent_erase_lock)
// either waits for this episode and erases it too, or has committed and this write
// creates nothing. $holder is null for a team's space and global.
OPTIONAL MATCH (a:Agent {id: $holder})
SET a._lock = true
REMOVE a._lock
WITH a
WHERE $holder IS NULL OR EXISTS { MATCH (:Agent {id: $holder}) }
CREATE (e:Episodic)
SET e = $props
SET e.group_id = $group_id
RETURN e.uuid AS uuid
