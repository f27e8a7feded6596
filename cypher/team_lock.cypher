// Take a team's write lock, and those of every episode of its space and of their
// ids' index entries (as agent_erase_lock does for an agent's spaces), for the rest
// of the transaction: a move out of the space that began first is waited for, and
// team_memories, run next, reads the space as it then is.
MATCH (t:Team {org: $org, name: $name})
SET t._lock = true
REMOVE t._lock
WITH t
OPTIONAL MATCH (e:Episodic) WHERE e.group_id = $group_id
WITH t, e, e.uuid AS uuid
REMOVE e.uuid
SET e.uuid = uuid
RETURN count(DISTINCT t) AS locked
