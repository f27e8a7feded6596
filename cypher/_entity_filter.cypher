n.group_id IN $group_ids
AND (n.supported_until IS NULL OR n.supported_until > datetime())
AND ($window.created_after IS NULL OR n.created_at >= $window.created_after)
AND ($window.created_before IS NULL OR n.created_at < $window.created_before)
