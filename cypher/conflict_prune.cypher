// Remove the conflicts of space $group_id whose facts are gone (episode_unlink deleted
// them: a memory erased or moved away), and the open ones whose facts were retracted
// (expired: the memory stating them changed).
MATCH (c:Conflict)
WHERE c.group_id = $group_id
OPTIONAL MATCH ()-[o:RELATES_TO {uuid: c.old_fact}]->()
OPTIONAL MATCH ()-[n:RELATES_TO {uuid: c.new_fact}]->()
WITH c, o, n
WHERE o IS NULL OR n IS NULL OR (c.keep IS NULL AND (o.expired_at IS NOT NULL OR n.expired_at IS NOT NULL))
DETACH DELETE c
