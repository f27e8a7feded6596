// A webhook registration counts the webhooks of its host key that follow the same
// spaces (webhook_create): by this index, not by reading every webhook of the
// organization.
CREATE INDEX webhook_org_host_key IF NOT EXISTS FOR (w:Webhook) ON (w.org, w.host_key);
