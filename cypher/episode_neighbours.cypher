// The neighbours of the episodes $uuids in their conversation: for each that lies in
// the visible set, the episode of its space just before it and the one just after it
// by reference time (valid_at; created_at breaks ties), also of the same agent, that
// passes search's filter (_episode_filter), said within $within seconds of it. Search
// ranks the turns around the memories it found. Rows: [uuid, before, after], a null
// where there is none. The bound keeps each read to the episodes of that window
// (episode_group_valid), however long the conversation.
UNWIND $uuids AS id
MATCH (e:Episodic {uuid: id})
WHERE e.group_id IN $group_ids
OPTIONAL CALL (e) {
  MATCH (x:Episodic)
  WHERE x.group_id = e.group_id AND e.valid_at - duration({seconds: $within}) <= x.valid_at <= e.valid_at
    AND x.uuid <> e.uuid AND x.agent_id = e.agent_id
    AND (x.valid_at < e.valid_at OR x.created_at < e.created_at)
    AND {{episode_filter}}
  RETURN x AS p ORDER BY x.valid_at DESC, x.created_at DESC LIMIT 1
}
OPTIONAL CALL (e) {
  MATCH (x:Episodic)
  WHERE x.group_id = e.group_id AND e.valid_at <= x.valid_at <= e.valid_at + duration({seconds: $within})
    AND x.uuid <> e.uuid AND x.agent_id = e.agent_id
    AND (x.valid_at > e.valid_at OR x.created_at > e.created_at)
    AND {{episode_filter}}
  RETURN x AS n ORDER BY x.valid_at, x.created_at LIMIT 1
}
RETURN id, p, n
