// Episodes by id ($uuids, in that order), only those that lie in the requester's
// visible set and have not expired (an expired memory is gone for every reader from
// its expires_at on, before the sweeper erases it).
UNWIND $uuids AS id
MATCH (e:Episodic {uuid: id})
WHERE (e.group_id IN $group_ids OR ($any_agent_public AND e.group_id STARTS WITH $public_prefix AND e.group_id ENDS WITH '-public'))
  AND (e.expires_at IS NULL OR e.expires_at > datetime())
RETURN e
