x.group_id IN $group_ids
AND (x.expires_at IS NULL OR x.expires_at > datetime())
AND ($window.created_after IS NULL OR x.created_at >= $window.created_after)
AND ($window.created_before IS NULL OR x.created_at < $window.created_before)
AND ($window.said_by IS NULL OR x.valid_at <= $window.said_by)
