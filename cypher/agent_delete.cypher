// Erase an agent and both of its spaces: every episode, entity, fact, mention and
// conflict.
// Runs after agent_erase_lock in one transaction, and reads the spaces again under
// its locks.
MATCH (a:Agent {id: $id})
WHERE a.owner_id = $expected_owner
OPTIONAL MATCH (e:Episodic) WHERE e.group_id IN $group_ids
WITH a, collect(e) AS episodes
OPTIONAL MATCH (n:Entity) WHERE n.group_id IN $group_ids
WITH a, episodes, collect(n) AS entities
OPTIONAL MATCH (c:Conflict) WHERE c.group_id IN $group_ids
WITH a, episodes, entities, collect(c) AS conflicts
FOREACH (x IN episodes | DETACH DELETE x)
FOREACH (x IN entities | DETACH DELETE x)
FOREACH (x IN conflicts | DETACH DELETE x)
DETACH DELETE a
RETURN size(episodes) AS episodes
