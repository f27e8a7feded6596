// Erase up to $limit finished deliveries (delivered, failed, dropped) older than
// $before: the outbox keeps its history for webhooks.retention. And the deliveries
// whose webhook is gone, whatever their status: an event written while its webhook
// was being deleted can leave one, which no deliverer claims.
MATCH (d:WebhookDelivery)
WHERE (d.status IN ['delivered', 'failed', 'dropped'] AND d.at < $before)
   OR NOT EXISTS { MATCH (w:Webhook {id: d.webhook_id}) }
WITH d LIMIT $limit
DETACH DELETE d
RETURN count(*) AS pruned
