// The episode an earlier request with the same (hashed) idempotency key stored, when
// it lies in the space written to; and whether the key is used at all (in another
// space: then this is another request, refused without saying more of that episode).
OPTIONAL MATCH (e:Episodic {idempotency_key: $key})
RETURN CASE WHEN e.group_id IN $group_ids OR ($any_agent_public AND e.group_id STARTS WITH $public_prefix AND e.group_id ENDS WITH '-public')
            THEN e END AS e,
       e IS NOT NULL AS used
