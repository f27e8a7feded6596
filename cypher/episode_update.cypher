// Replace an episode's fields ($props; a null removes one) and keep what they were as
// a :MemoryVersion node ($previous) it points to. $group_id is its space from now on:
// the episode and all its versions carry it (a move leaves nothing behind). Runs
// after episode_lock and, when the content or the space changes, episode_unlink.
MATCH (e:Episodic {uuid: $uuid})
CREATE (e)-[:HAS_VERSION]->(v:MemoryVersion)
SET v = $previous
SET e += $props
WITH e
MATCH (e)-[:HAS_VERSION]->(x:MemoryVersion)
SET x.group_id = $group_id
WITH DISTINCT e
SET e.group_id = $group_id
RETURN e
