// The neighbours of the episodes $uuids in their conversation: for each that lies in
// the visible set, the episode of its space just before it and the one just after it
// by reference time (valid_at; created_at breaks ties), also of the same agent, not
// expired. A context block shows the turns around a memory it found when they earn
// their tokens. Rows: [uuid, before, after], a null where there is none.
UNWIND $uuids AS id
MATCH (e:Episodic {uuid: id})
WHERE e.group_id IN $group_ids
OPTIONAL CALL (e) {
  MATCH (p:Episodic)
  WHERE p.group_id = e.group_id AND p.valid_at <= e.valid_at AND p.uuid <> e.uuid AND p.agent_id = e.agent_id
    AND (p.valid_at < e.valid_at OR p.created_at < e.created_at)
    AND (p.expires_at IS NULL OR p.expires_at > datetime())
  RETURN p ORDER BY p.valid_at DESC, p.created_at DESC LIMIT 1
}
OPTIONAL CALL (e) {
  MATCH (n:Episodic)
  WHERE n.group_id = e.group_id AND n.valid_at >= e.valid_at AND n.uuid <> e.uuid AND n.agent_id = e.agent_id
    AND (n.valid_at > e.valid_at OR n.created_at > e.created_at)
    AND (n.expires_at IS NULL OR n.expires_at > datetime())
  RETURN n ORDER BY n.valid_at, n.created_at LIMIT 1
}
RETURN id, p, n
