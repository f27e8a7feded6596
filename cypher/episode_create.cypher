// One episode, durable with status queued before the client hears 202. group_id is
// set last so that it heads the node's property chain (see episodeParams).
CREATE (e:Episodic)
SET e = $props
SET e.group_id = $group_id
RETURN e.uuid AS uuid
