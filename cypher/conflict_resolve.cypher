// Resolve an open conflict of space $group_id, after conflict_lock in the same
// transaction: $keep old (the new fact never held: invalid_at its valid_at, expired
// now), new (the old fact ends when the new one began, and is expired now), or both
// (neither changes). Either way both facts stop naming the conflict.
MATCH (c:Conflict {uuid: $uuid})
WHERE c.group_id = $group_id AND c.keep IS NULL
MATCH (:Entity)-[o:RELATES_TO {uuid: c.old_fact}]->(:Entity)
WHERE o.group_id = c.group_id
MATCH (:Entity)-[n:RELATES_TO {uuid: c.new_fact}]->(:Entity)
WHERE n.group_id = c.group_id
FOREACH (_ IN CASE WHEN $keep = 'new' THEN [1] ELSE [] END |
  SET o.invalid_at = coalesce(o.invalid_at, n.valid_at, c.created_at), o.expired_at = coalesce(o.expired_at, $now))
FOREACH (_ IN CASE WHEN $keep = 'old' THEN [1] ELSE [] END |
  SET n.invalid_at = coalesce(n.invalid_at, n.valid_at, c.created_at), n.expired_at = coalesce(n.expired_at, $now))
SET o.conflicts = [x IN coalesce(o.conflicts, []) WHERE x <> c.uuid],
    n.conflicts = [x IN coalesce(n.conflicts, []) WHERE x <> c.uuid],
    c.keep = $keep, c.resolved_by = $by, c.resolved_at = $now
RETURN c {.*} AS c
