// The memories of agent $agent derived from one of the memories $ids (derived_from)
// that would outlive $at now expire at $at, as what they were derived from does; a
// memory is derived only from its own agent's memories (episode_agent finds them).
// Rows: their ids.
MATCH (d:Episodic {agent_id: $agent})
WHERE any(id IN d.derived_from WHERE id IN $ids) AND (d.expires_at IS NULL OR d.expires_at > $at)
SET d.expires_at = $at
RETURN d.uuid
