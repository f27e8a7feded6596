// A page of facts in the given spaces, newest first, every fact whatever its time, of
// those _fact_typed selects (edge types, attributes, the types of their ends); the
// cursor is the last row of the previous page.
MATCH (:Entity)-[r:RELATES_TO]->(:Entity)
WHERE r.group_id IN $group_ids
  AND (r.supported_until IS NULL OR r.supported_until > datetime())
  AND {{fact_typed}}
  AND ($cursor_at IS NULL OR r.created_at < $cursor_at
       OR (r.created_at = $cursor_at AND r.uuid < $cursor_uuid))
WITH r ORDER BY r.created_at DESC, r.uuid DESC
LIMIT $limit
RETURN {{fact_row}}
