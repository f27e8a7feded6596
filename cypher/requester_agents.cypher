// The agents a requester owns, which its erasure erases (EraseRequester runs it before
// and again after taking their locks: an agent given away or created meanwhile makes
// the erasure answer ECONFLICT rather than miss it).
MATCH (a:Agent {org: $org, owner_id: $id})
RETURN a.id AS id
ORDER BY id
