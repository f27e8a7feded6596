// One episode by id, as episode_get reads it (visible, not expired), with up to
// $limit of its earlier versions, newest first, older than version $before when it
// is not null.
MATCH (e:Episodic {uuid: $uuid})
WHERE (e.group_id IN $group_ids OR ($any_agent_public AND e.group_id STARTS WITH $public_prefix AND e.group_id ENDS WITH '-public'))
  AND (e.expires_at IS NULL OR e.expires_at > datetime())
RETURN e, COLLECT {
  MATCH (e)-[:HAS_VERSION]->(v:MemoryVersion)
  WHERE $before IS NULL OR v.version < $before
  RETURN v ORDER BY v.version DESC LIMIT $limit
} AS versions
