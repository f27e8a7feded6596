// A page of episodes in the given spaces, newest first; the cursor is the last row of
// the previous page.
MATCH (e:Episodic)
WHERE e.group_id IN $group_ids
  AND (e.expires_at IS NULL OR e.expires_at > datetime())
  AND ($agent_id IS NULL OR e.agent_id = $agent_id)
  AND ($cursor_at IS NULL OR e.created_at < $cursor_at
       OR (e.created_at = $cursor_at AND e.uuid < $cursor_uuid))
RETURN e
ORDER BY e.created_at DESC, e.uuid DESC
LIMIT $limit
