// The second lock of a requester's erasure (after agent_erase_lock for each of its
// agents, in the same transaction): the write locks of its principal and of every
// episode of its shared space and of their ids' index entries, as agent_erase_lock
// takes them for an agent's spaces. A write to the shared space holds the agent it is
// written for (space_hold), which is the requester's and locked already; a save that
// holds an episode of the space (episode_lease_check) is waited for, so
// requester_erasure and requester_erase, run next, read the space with what it wrote,
// and a save that comes later finds its episode gone.
OPTIONAL MATCH (p:Principal {org: $org, id: $id})
SET p._lock = true
REMOVE p._lock
WITH count(p) AS principals
OPTIONAL MATCH (e:Episodic) WHERE e.group_id = $shared
WITH e, e.uuid AS uuid
REMOVE e.uuid
SET e.uuid = uuid
RETURN count(*) AS locked
