// Resolve an open conflict of space $group_id, after conflict_lock in the same
// transaction: the two facts' times as graph.Fact.End left them ($old, $new: valid_at,
// invalid_at, expired_at, valid_at_assumed, overruled_valid_at), the conflict marked
// resolved with $keep, and both facts no longer naming it.
MATCH (c:Conflict {uuid: $uuid})
WHERE c.group_id = $group_id AND c.keep IS NULL
MATCH (:Entity)-[o:RELATES_TO {uuid: c.old_fact}]->(:Entity)
WHERE o.group_id = c.group_id
MATCH (:Entity)-[n:RELATES_TO {uuid: c.new_fact}]->(:Entity)
WHERE n.group_id = c.group_id
SET o.valid_at = $old.valid_at, o.invalid_at = $old.invalid_at, o.expired_at = $old.expired_at,
    o.valid_at_assumed = $old.valid_at_assumed, o.overruled_valid_at = $old.overruled_valid_at,
    n.valid_at = $new.valid_at, n.invalid_at = $new.invalid_at, n.expired_at = $new.expired_at,
    n.valid_at_assumed = $new.valid_at_assumed, n.overruled_valid_at = $new.overruled_valid_at
SET o.conflicts = [x IN coalesce(o.conflicts, []) WHERE x <> c.uuid],
    n.conflicts = [x IN coalesce(n.conflicts, []) WHERE x <> c.uuid],
    c.keep = $keep, c.resolved_by = $by, c.resolved_at = $now
// conflict.resolved (webhook_emit).
WITH c
CALL (c) {
  WITH {id: randomUUID(), kind: 'conflict.resolved', group_id: c.group_id, subject: c.uuid, memory: c.episode,
        at: $now} AS ev
  CALL (ev) {
{{webhook_emit}}
  }
}
RETURN c {.*} AS c
