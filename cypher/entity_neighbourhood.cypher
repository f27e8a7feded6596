// What resolution needs, for several episodes at once, in one round trip: per query,
// the entities of its space that may be the ones the episode names (same name or
// alias ignoring case, or sharing a word of a name or alias), and every fact of that
// space touching them. Never another space's, and nothing that only expired memories
// support: a new memory does not revive what an expired one said. Two plans, as the
// search queries, by the size of the space (its entities counted up to
// $exact_max + 1): a small space's entities are read and their name words
// (name_words) compared; a large space is asked through the node_name_and_summary
// fulltext index, whose hits from every space are filtered — for a small space those
// are mostly other spaces' namesakes, read and dropped. With either plan, the entities
// the episode q.mentioned of the same space mentions are candidates too.
UNWIND range(0, size($queries) - 1) AS i
WITH i, $queries[i] AS q
CALL (q) {
  MATCH (v:Entity) WHERE v.group_id = q.group_id
  WITH v LIMIT $exact_max + 1
  WITH collect(v) AS space
  CALL (q, space) {
    WITH space WHERE size(space) <= $exact_max
    UNWIND space AS n
    WITH n, coalesce(n.name_words, ' ' + toLower(n.name) + ' ') AS words
    WHERE toLower(n.name) IN q.lower_names OR any(w IN q.words WHERE words CONTAINS ' ' + w + ' ')
       OR any(a IN coalesce(n.aliases, []) WHERE toLower(a) IN q.lower_names)
    RETURN n
    UNION
    WITH space WHERE size(space) > $exact_max
    MATCH (n:Entity)
    WHERE n.group_id = q.group_id
      AND (toLower(n.name) IN q.lower_names OR any(a IN coalesce(n.aliases, []) WHERE toLower(a) IN q.lower_names))
    RETURN n
    UNION
    WITH space WHERE size(space) > $exact_max
    UNWIND q.terms AS term
    CALL db.index.fulltext.queryNodes('node_name_and_summary', term) YIELD node AS n
    WITH n
    WHERE n.group_id = q.group_id
    RETURN n
    UNION
    MATCH (:Episodic {uuid: q.mentioned, group_id: q.group_id})-[:MENTIONS]->(n:Entity)
    WHERE n.group_id = q.group_id
    RETURN n
  }
  WITH DISTINCT n
  WHERE n.supported_until IS NULL OR n.supported_until > datetime()
  LIMIT $limit
  RETURN collect(n) AS nodes
}
CALL (q, nodes) {
  UNWIND nodes AS n
  MATCH (n)-[r:RELATES_TO]-(:Entity)
  WHERE r.group_id = q.group_id AND (r.supported_until IS NULL OR r.supported_until > datetime())
  WITH DISTINCT r
  RETURN collect([r, startNode(r).uuid, endNode(r).uuid]) AS facts
}
RETURN i, nodes, facts
