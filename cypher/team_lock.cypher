// Take a team's write lock for the rest of the transaction (see episode_lock).
MATCH (t:Team {name: $name})
SET t._lock = true
REMOVE t._lock
RETURN count(t) AS locked
