// Detach one episode from what was derived from it in its space $group_id: the facts
// it alone supports are expired at $now when $retire (the episode's content changed:
// memgate learned they are no longer stated; nothing is deleted) and deleted otherwise
// (the episode is erased, or moved to another space where they are derived again);
// facts others also support stop citing it; its mentions go, and entities left with
// neither mentions nor facts go. Everything stays within $group_id.
MATCH (e:Episodic {uuid: $uuid})
WHERE e.group_id = $group_id
OPTIONAL MATCH (:Entity)-[r:RELATES_TO]->(:Entity)
WHERE r.group_id = $group_id AND $uuid IN r.episodes
WITH e, collect(r) AS facts
WITH e, [f IN facts WHERE size(f.episodes) > 1] AS shared, [f IN facts WHERE size(f.episodes) <= 1] AS only
FOREACH (r IN shared | SET r.episodes = [u IN r.episodes WHERE u <> $uuid])
FOREACH (r IN CASE WHEN $retire THEN only ELSE [] END | SET r.expired_at = coalesce(r.expired_at, $now))
FOREACH (r IN CASE WHEN $retire THEN [] ELSE only END | DELETE r)
WITH e
OPTIONAL MATCH (e)-[m:MENTIONS]->(n:Entity)
WITH e, collect(m) AS mentions, collect(DISTINCT n) AS mentioned
FOREACH (m IN mentions | DELETE m)
SET e.entity_edges = []
WITH mentioned
UNWIND mentioned AS n
WITH n
WHERE n.group_id = $group_id AND NOT (n)<-[:MENTIONS]-(:Episodic) AND NOT (n)-[:RELATES_TO]-(:Entity)
DELETE n
RETURN count(n) AS entities_removed
