// The audit events of one organization (its system space), newest first, filtered;
// its admins only.
MATCH (a:AuditEvent)
WHERE a.group_id = $group_id
  AND ($kind IS NULL OR a.kind = $kind)
  AND ($actor IS NULL OR a.actor = $actor)
  AND ($subject IS NULL OR a.subject = $subject)
  AND ($since IS NULL OR a.at >= $since)
  AND ($until IS NULL OR a.at < $until)
  AND ($cursor_at IS NULL OR a.at < $cursor_at
       OR (a.at = $cursor_at AND a.id < $cursor_uuid))
RETURN a
ORDER BY a.at DESC, a.id DESC
LIMIT $limit
