// Erase up to $limit finished deliveries (delivered, failed, dropped) older than
// $before: the outbox keeps its history for webhooks.retention.
MATCH (d:WebhookDelivery)
WHERE d.status IN ['delivered', 'failed', 'dropped'] AND d.at < $before
WITH d LIMIT $limit
DETACH DELETE d
RETURN count(*) AS pruned
