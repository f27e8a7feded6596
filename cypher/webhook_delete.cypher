// Delete a webhook of organization $org and every delivery of it.
MATCH (w:Webhook {id: $id, org: $org})
CALL (w) {
  MATCH (d:WebhookDelivery {webhook_id: w.id})
  DETACH DELETE d
}
DETACH DELETE w
RETURN true AS deleted
