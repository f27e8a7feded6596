// Take a conflict's write lock and read it, when it is in the visible spaces: the
// first step of resolving it, so of two resolutions the second sees the first's.
MATCH (c:Conflict {uuid: $uuid})
WHERE c.group_id IN $group_ids OR ($any_agent_public AND c.group_id STARTS WITH $public_prefix AND c.group_id ENDS WITH '-public')
SET c._lock = true
REMOVE c._lock
RETURN c {.*} AS c
