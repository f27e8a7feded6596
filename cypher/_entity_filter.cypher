n.group_id IN $group_ids
AND (n.supported_until IS NULL OR n.supported_until > datetime())
AND ($created_after IS NULL OR n.created_at >= $created_after)
AND ($created_before IS NULL OR n.created_at < $created_before)
