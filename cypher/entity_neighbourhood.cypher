// What resolution needs from one space, in one round trip: the entities that may be
// the ones an episode names (same name ignoring case, or sharing a word with it
// through the fulltext index), and every fact of the space that touches them. Never
// another space's.
CALL () {
  MATCH (n:Entity)
  WHERE n.group_id = $group_id AND toLower(n.name) IN $lower_names
  RETURN n
  UNION
  UNWIND $terms AS term
  CALL db.index.fulltext.queryNodes('node_name_and_summary', term) YIELD node AS n
  WITH n
  WHERE n.group_id = $group_id
  RETURN n
}
WITH DISTINCT n
LIMIT $limit
WITH collect(n) AS nodes
CALL (nodes) {
  UNWIND nodes AS n
  MATCH (n)-[r:RELATES_TO]-(:Entity)
  WHERE r.group_id = $group_id
  WITH DISTINCT r
  RETURN collect([r, startNode(r).uuid, endNode(r).uuid]) AS facts
}
RETURN nodes, facts
