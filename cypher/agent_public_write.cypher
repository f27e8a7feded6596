// Count one public write of an agent against its daily quota, in the transaction that
// stores it (episode_create follows). The agent's write lock is taken first and the
// agent read again, so concurrent writes (from any memgate process) count one after
// another. The count restarts on a new UTC day ($day). Returns the writes before this
// one; the count moves only while it is under $limit. No row: the agent is gone.
MATCH (x:Agent {org: $org, id: $agent})
SET x._lock = true
REMOVE x._lock
WITH count(x) AS locked
MATCH (a:Agent {org: $org, id: $agent})
WITH a, CASE WHEN a.public_writes_day = $day THEN a.public_writes ELSE 0 END AS used
FOREACH (_ IN CASE WHEN used < $limit THEN [1] ELSE [] END |
  SET a.public_writes_day = $day, a.public_writes = used + 1)
RETURN used
