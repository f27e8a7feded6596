// A page of teams, newest first (then by name), each with the role of $requester in it
// (null when it is no member): the teams $mine is a member or the owner of, or every
// team ($all); $mine is null with $all, and a property equal to null matches nothing.
// The branch of every team starts from $all alone, so that it reads no team unless
// asked. The cursor is the last row of the previous page.
CALL {
  WITH $all AS all WHERE all
  MATCH (t:Team {org: $org}) RETURN t
  UNION
  MATCH (:Principal {org: $org, id: $mine})-[:MEMBER_OF]->(t:Team) RETURN t
  UNION
  MATCH (t:Team {org: $org, owner_id: $mine}) RETURN t
}
WITH t, coalesce(t.created_at, datetime({epochMillis: 0})) AS at
WHERE $cursor_at IS NULL OR at < $cursor_at OR (at = $cursor_at AND t.name < $cursor_uuid)
WITH t, at ORDER BY at DESC, t.name DESC
LIMIT $limit
RETURN t, at, COLLECT { MATCH (:Principal {org: $org, id: $requester})-[m:MEMBER_OF]->(t) RETURN m.role }[0] AS role
