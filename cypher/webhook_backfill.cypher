// Webhooks made before 014_webhook_follows get the indexed copies of their group_ids
// the outbox finds them by (_webhook_emit). Run at every start; it finds nothing to do
// once they have them.
MATCH (w:Webhook) WHERE w.follow0 IS NULL
SET w.follow0 = w.group_ids[0], w.follow1 = w.group_ids[1]
