x.group_id IN $group_ids
AND (x.expires_at IS NULL OR x.expires_at > datetime())
AND ($created_after IS NULL OR x.created_at >= $created_after)
AND ($created_before IS NULL OR x.created_at < $created_before)
