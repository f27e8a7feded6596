// One webhook of organization $org.
MATCH (w:Webhook {id: $id, org: $org})
RETURN w
