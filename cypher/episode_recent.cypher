// The context of an extraction: the space's latest processed episodes before this one.
MATCH (e:Episodic)
WHERE e.group_id = $group_id AND e.created_at < $before AND e.status = 'done'
RETURN e
ORDER BY e.created_at DESC
LIMIT $n
