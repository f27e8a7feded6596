// Replace requester $id with $pseudonym in every record of it that stays in its
// organization (requester_records), and each agent it owned with the agent's pseudonym
// ($agent_pseudonyms), in the erasure's transaction: who wrote, changed,
// promoted or resolved, the JWT host it wrote through ($jwt_host becomes
// $jwt_pseudonym) and its shared space as a promoted copy's origin ($shared becomes
// $shared_pseudonym). The idempotency key a memory it wrote was stored under is a
// hash of its id: it goes (a request repeating it is a new request).
{{requester_records}}
SET n.idempotency_key = CASE WHEN n.requester_id = $id THEN null ELSE n.idempotency_key END,
    n.request_hash = CASE WHEN n.requester_id = $id THEN null ELSE n.request_hash END
SET n.requester_id = CASE n.requester_id WHEN $id THEN $pseudonym ELSE n.requester_id END,
    n.updated_by = CASE n.updated_by WHEN $id THEN $pseudonym ELSE n.updated_by END,
    n.promoted_by = CASE n.promoted_by WHEN $id THEN $pseudonym ELSE n.promoted_by END,
    n.replaced_by = CASE n.replaced_by WHEN $id THEN $pseudonym ELSE n.replaced_by END,
    n.resolved_by = CASE n.resolved_by WHEN $id THEN $pseudonym ELSE n.resolved_by END,
    n.host_key = CASE n.host_key WHEN $jwt_host THEN $jwt_pseudonym ELSE n.host_key END,
    n.promoted_from_group_id = CASE n.promoted_from_group_id WHEN $shared THEN $shared_pseudonym ELSE n.promoted_from_group_id END,
    n.agent_id = coalesce($agent_pseudonyms[n.agent_id], n.agent_id)
RETURN count(n) AS pseudonymized
