// Episodes, durable with status queued before the client hears 202: $episodes is a
// list of {props, group_id, key, org, holder, team, authorized_at}, one episode or the
// several a group commit gathers (graph/neo4jstore/commit.go). For each, in order, the
// write's idempotency key is looked up first (idempotency_prior, in this transaction:
// an episode earlier in the list with the same key is found too): a key already used
// writes nothing and returns the episode stored under it (prior, when in the same
// space) and used. Otherwise the episode is created and its uuid returned (uuid).
// group_id is set last so that it heads the node's property chain (see
// episodeParams). An agent's space is written only while the agent exists, and a
// team's only while the team does (space_hold): this write creates nothing for a
// space whose holder is gone (uuid null, used false). A memory stored without
// extraction (extract: false) is done at once, and its memory.done goes to the outbox
// here.
UNWIND $episodes AS ep
CALL (ep) {
{{idempotency_prior}}
  OPTIONAL CALL (ep, used) {
    WITH ep WHERE NOT used
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
  RETURN uuid, prior, used
}
RETURN ep.props.uuid AS asked, uuid, prior, used
