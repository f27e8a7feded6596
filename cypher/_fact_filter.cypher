r.group_id IN $group_ids
AND (r.supported_until IS NULL OR r.supported_until > datetime())
AND ($include_expired
     OR ((r.valid_at IS NULL OR r.valid_at <= $at) AND (r.invalid_at IS NULL OR r.invalid_at > $at)
         AND ($as_of OR r.expired_at IS NULL)))
AND (size($window.relations) = 0 OR r.name IN $window.relations)
AND ($window.created_after IS NULL OR r.created_at >= $window.created_after)
AND ($window.created_before IS NULL OR r.created_at < $window.created_before)
