// How many nodes and relationships lie in the spaces whose group_id starts with $prefix.
CALL () {
  MATCH (n) WHERE n.group_id STARTS WITH $prefix
  RETURN count(n) AS nodes
}
CALL () {
  MATCH ()-[r]->() WHERE r.group_id STARTS WITH $prefix
  RETURN count(r) AS relationships
}
RETURN nodes, relationships
