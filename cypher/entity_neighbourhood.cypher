// What resolution needs, for several episodes at once, in one round trip: per query,
// the entities of its space that may be the ones the episode names (same name ignoring
// case, or sharing a word of the name through the fulltext index), and every fact of
// that space touching them. Never another space's.
UNWIND range(0, size($queries) - 1) AS i
WITH i, $queries[i] AS q
CALL (q) {
  CALL (q) {
    MATCH (n:Entity)
    WHERE n.group_id = q.group_id AND toLower(n.name) IN q.lower_names
    RETURN n
    UNION
    UNWIND q.terms AS term
    CALL db.index.fulltext.queryNodes('node_name_and_summary', term) YIELD node AS n
    WITH n
    WHERE n.group_id = q.group_id
    RETURN n
  }
  WITH DISTINCT n
  LIMIT $limit
  RETURN collect(n) AS nodes
}
CALL (q, nodes) {
  UNWIND nodes AS n
  MATCH (n)-[r:RELATES_TO]-(:Entity)
  WHERE r.group_id = q.group_id
  WITH DISTINCT r
  RETURN collect([r, startNode(r).uuid, endNode(r).uuid]) AS facts
}
RETURN i, nodes, facts
