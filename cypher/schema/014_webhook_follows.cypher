// The outbox (_webhook_emit) finds the webhooks following an event's space by index:
// follow0 and follow1 are a webhook's group_ids (an agent's private and public
// spaces; a team's or the system space alone), where a scan of every webhook read
// them in each save. Webhooks made before get them from webhook_backfill.
CREATE INDEX webhook_follow0 IF NOT EXISTS FOR (w:Webhook) ON (w.follow0);
CREATE INDEX webhook_follow1 IF NOT EXISTS FOR (w:Webhook) ON (w.follow1);
