// The first statement of an erasure (agent_delete is the second, in the same
// transaction). It takes the write locks of the agent and of every episode of its
// spaces, and of their ids' index entries (an id removed and set again: a write of
// the same value takes no lock). A write that looks the agent or an episode up by id
// then waits for the erasure and finds nothing, rather than holding the entry while
// it waits for the node and deadlocking with the delete. So new episodes stay out of
// the spaces (episode_create), and a save that holds an episode (episode_lease_check)
// is waited for: agent_delete reads the spaces afresh and finds all it wrote, and a
// save that comes later finds its episode gone and writes nothing.
MATCH (a:Agent {org: $org, id: $id})
WHERE a.owner_id = $expected_owner
REMOVE a.id
SET a.id = $id
WITH a
OPTIONAL MATCH (e:Episodic) WHERE e.group_id IN $group_ids
WITH e, e.uuid AS uuid
REMOVE e.uuid
SET e.uuid = uuid
RETURN count(*) AS locked
