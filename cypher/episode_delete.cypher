// The delete cascade of one episode: facts it alone supports go, facts others also
// support lose it from their episodes list, the episode and its mentions go, and
// entities left with neither mentions nor facts go. Everything stays within $group_id.
MATCH (e:Episodic {uuid: $uuid})
WHERE e.group_id = $group_id
OPTIONAL MATCH (:Entity)-[r:RELATES_TO]->(:Entity)
WHERE r.group_id = $group_id AND $uuid IN r.episodes
WITH e, collect(r) AS facts
WITH e, [f IN facts WHERE size(f.episodes) > 1] AS shared, [f IN facts WHERE size(f.episodes) <= 1] AS only
FOREACH (r IN shared | SET r.episodes = [u IN r.episodes WHERE u <> $uuid])
FOREACH (r IN only | DELETE r)
WITH e
OPTIONAL MATCH (e)-[:MENTIONS]->(n:Entity)
WITH e, collect(DISTINCT n) AS mentioned
DETACH DELETE e
WITH mentioned
UNWIND mentioned AS n
WITH n
WHERE n.group_id = $group_id AND NOT (n)<-[:MENTIONS]-(:Episodic) AND NOT (n)-[:RELATES_TO]-(:Entity)
DELETE n
RETURN count(n) AS entities_removed
