// A page of agents, newest first (then by id), each with its share grants, its
// delegations and the relation of $requester to it: whether it owns it, whether it
// holds a grant in force of it (no expires_at, or one still ahead). Which agents:
// those $mine owns or holds a grant in force of, those $owner owns, or every agent ($all); the selectors not asked
// for are null (false), and a property equal to null matches nothing. The branch of
// every agent starts from $all alone, so that it reads no agent unless asked. The
// cursor is the last row of the previous page.
CALL {
  WITH $all AS all WHERE all
  MATCH (a:Agent {org: $org}) RETURN a
  UNION
  MATCH (a:Agent {org: $org, owner_id: $owner}) RETURN a
  UNION
  MATCH (a:Agent {org: $org, owner_id: $mine}) RETURN a
  UNION
  MATCH (a:Agent)-[g:SHARED_WITH]->(:Principal {org: $org, id: $mine})
  WHERE g.expires_at IS NULL OR g.expires_at > datetime()
  RETURN a
}
WITH a, coalesce(a.created_at, datetime({epochMillis: 0})) AS at
WHERE $cursor_at IS NULL OR at < $cursor_at OR (at = $cursor_at AND a.id < $cursor_uuid)
WITH a, at ORDER BY at DESC, a.id DESC
LIMIT $limit
RETURN a, at, a.owner_id = $requester AS owns,
       EXISTS { MATCH (a)-[g:SHARED_WITH]->(:Principal {org: $org, id: $requester})
                WHERE g.expires_at IS NULL OR g.expires_at > datetime() } AS shared,
       {{agent_shares}} AS shares, {{agent_delegates}} AS delegates
