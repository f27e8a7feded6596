// A page of the open conflicts in the given spaces, newest first, each with its two
// facts as they are now (a conflict whose facts are gone or no longer visible is not
// listed); the cursor is the last row of the previous page.
MATCH (c:Conflict)
WHERE c.group_id IN $group_ids AND c.keep IS NULL
  AND ($cursor_at IS NULL OR c.created_at < $cursor_at
       OR (c.created_at = $cursor_at AND c.uuid < $cursor_uuid))
MATCH (:Entity)-[o:RELATES_TO {uuid: c.old_fact}]->(:Entity)
WHERE o.group_id = c.group_id AND o.expired_at IS NULL AND (o.supported_until IS NULL OR o.supported_until > datetime())
MATCH (:Entity)-[n:RELATES_TO {uuid: c.new_fact}]->(:Entity)
WHERE n.group_id = c.group_id AND n.expired_at IS NULL AND (n.supported_until IS NULL OR n.supported_until > datetime())
WITH c, o, n ORDER BY c.created_at DESC, c.uuid DESC
LIMIT $limit
CALL (o) { WITH o AS r RETURN {{fact_row}} }
WITH c, n, r AS old_r, s AS old_s, t AS old_t
CALL (n) { WITH n AS r RETURN {{fact_row}} }
RETURN c {.*} AS c, old_r, old_s, old_t, r AS new_r, s AS new_s, t AS new_t
