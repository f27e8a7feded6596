// The first statement of erasing one expired memory (episode_delete is the second, in
// the same transaction). It takes the write lock of the episode's id index entry (an
// id removed and set again; see agent_erase_lock), so a second sweeper erasing the
// same memory waits, then finds nothing and does nothing: no double erasure, no second
// audit event. Returns the episode while it is still expired.
MATCH (e:Episodic {uuid: $uuid})
WHERE e.expires_at <= datetime()
WITH e, e.uuid AS uuid
REMOVE e.uuid
SET e.uuid = uuid
RETURN e
