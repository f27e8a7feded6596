// Episodes, durable with status queued before the client hears 202: $episodes is a
// list of {props, group_id, holder, team}, one episode or the several a group commit
// gathers (graph/neo4jstore/commit.go), and the uuids of those created are returned.
// group_id is set last so that it heads the node's property chain (see
// episodeParams). An agent's space is written only while the agent exists, and a
// team's only while the team does: the holder's write lock is taken first and the
// holder looked up again under it, so an erasure (agent_erase_lock) or a dissolution
// (team_lock) either waits for this episode and takes it too, or has committed and
// this write creates nothing for that space. holder is null for a team's space and
// global; team is null but for a team's.
UNWIND $episodes AS ep
CALL (ep) {
  OPTIONAL MATCH (a:Agent {id: ep.holder})
  SET a._lock = true
  REMOVE a._lock
  WITH a
  OPTIONAL MATCH (t:Team {name: ep.team})
  SET t._lock = true
  REMOVE t._lock
  WITH t
  WHERE (ep.holder IS NULL OR EXISTS { MATCH (:Agent {id: ep.holder}) })
    AND (ep.team IS NULL OR EXISTS { MATCH (:Team {name: ep.team}) })
  CREATE (e:Episodic)
  SET e = ep.props
  SET e.group_id = ep.group_id
  RETURN e.uuid AS uuid
}
RETURN uuid
