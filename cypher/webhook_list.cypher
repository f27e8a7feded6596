// The webhooks of organization $org that $requester registered, and with $audit the
// organization's audit webhooks, oldest first.
MATCH (w:Webhook {org: $org})
WHERE (w.requester = $requester AND NOT w.audit) OR ($audit AND w.audit)
RETURN w
ORDER BY w.created_at, w.id
