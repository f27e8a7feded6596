// One episode, durable with status queued before the client hears 202. group_id is
// set last so that it heads the node's property chain (see episodeParams).
// An agent's space is written only while the agent exists, and a team's only while
// the team does: the holder's write lock is taken first and the holder looked up again
// under it, so an erasure (agent_erase_lock) or a dissolution (team_lock) either waits
// for this episode and takes it too, or has committed and this write creates nothing.
// $holder is null for a team's space and global; $team is null but for a team's.
OPTIONAL MATCH (a:Agent {id: $holder})
SET a._lock = true
REMOVE a._lock
WITH a
OPTIONAL MATCH (t:Team {name: $team})
SET t._lock = true
REMOVE t._lock
WITH t
WHERE ($holder IS NULL OR EXISTS { MATCH (:Agent {id: $holder}) })
  AND ($team IS NULL OR EXISTS { MATCH (:Team {name: $team}) })
CREATE (e:Episodic)
SET e = $props
SET e.group_id = $group_id
RETURN e.uuid AS uuid
