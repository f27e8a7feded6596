// Webhooks: subscriptions (:Webhook) and their outbox (:WebhookDelivery, one per
// event and webhook, written in the transaction of the change it reports), leased by
// the deliverers of every memgate process as ingestion's queue is.
CREATE CONSTRAINT webhook_id IF NOT EXISTS FOR (w:Webhook) REQUIRE w.id IS UNIQUE;
CREATE INDEX webhook_org IF NOT EXISTS FOR (w:Webhook) ON (w.org, w.requester);
CREATE CONSTRAINT webhook_delivery_id IF NOT EXISTS FOR (d:WebhookDelivery) REQUIRE d.id IS UNIQUE;
CREATE INDEX webhook_delivery_due IF NOT EXISTS FOR (d:WebhookDelivery) ON (d.status, d.next_at);
CREATE INDEX webhook_delivery_hook IF NOT EXISTS FOR (d:WebhookDelivery) ON (d.webhook_id, d.at);
CREATE INDEX webhook_delivery_group IF NOT EXISTS FOR (d:WebhookDelivery) ON (d.group_id);
