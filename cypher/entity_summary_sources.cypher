// What the summaries of entities $uuids of space $group_id are made of (graph.Description,
// graph.EntitySummary), read in the transaction that changed their support: each
// entity's name and stored description; what the episodes still mentioning it said
// of it, the newest mention first (collect leaves out a mention saved before mentions
// recorded it, which counts in `mentions` only); the facts about it that hold now; and
// its attribute history with the episodes still mentioning it, whose statements alone
// stay in it.
UNWIND $uuids AS id
MATCH (n:Entity {uuid: id})
WHERE n.group_id = $group_id
CALL (n) {
  OPTIONAL MATCH (x:Episodic)-[m:MENTIONS]->(n)
  WITH x, m ORDER BY m.created_at DESC, x.created_at DESC, x.uuid DESC
  RETURN collect(m.description) AS said, count(m) AS mentions, collect(x.uuid) AS mentioned_by
}
CALL (n) {
  OPTIONAL MATCH (n)-[r:RELATES_TO]-(:Entity)
  WHERE r.group_id = $group_id AND r.invalid_at IS NULL AND r.expired_at IS NULL
  RETURN collect(DISTINCT r {.uuid, .fact, .valid_at, .valid_at_assumed, .created_at, source: startNode(r).uuid, target: endNode(r).uuid}) AS facts
}
RETURN n.uuid AS uuid, n.name AS name, n.description AS description, said, mentions, facts,
       n.attribute_history AS attribute_history, mentioned_by
