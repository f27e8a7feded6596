// Episodes, durable with status queued before the client hears 202: $episodes is a
// list of {props, group_id, holder, team}, one episode or the several a group commit
// gathers (graph/neo4jstore/commit.go), and the uuids of those created are returned.
// group_id is set last so that it heads the node's property chain (see
// episodeParams). An agent's space is written only while the agent exists, and a
// team's only while the team does (space_hold): this write creates nothing for a
// space whose holder is gone. A memory stored without extraction (extract: false)
// is done at once, and its memory.done goes to the outbox here.
UNWIND $episodes AS ep
CALL (ep) {
{{space_hold}}
  CREATE (e:Episodic)
  SET e = ep.props
  SET e.group_id = ep.group_id
  WITH e
  CALL (e) {
    // A memory stored without extraction is done at once: memory.done (webhook_emit).
    WITH e WHERE e.extract = false AND e.status = 'done'
    WITH {id: randomUUID(), kind: 'memory.done', group_id: e.group_id, subject: e.uuid, agent: e.agent_id,
          at: e.created_at} AS ev
    CALL (ev) {
{{webhook_emit}}
    }
  }
  RETURN e.uuid AS uuid
}
RETURN uuid
