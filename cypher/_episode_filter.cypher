x.group_id IN $group_ids
AND ($created_after IS NULL OR x.created_at >= $created_after)
AND ($created_before IS NULL OR x.created_at < $created_before)
