// Entities of one space that may be the ones an episode names: same name ignoring
// case, or sharing a word with it (fulltext). Never another space's.
CALL {
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
RETURN DISTINCT n
LIMIT $limit
