// A batch of the items of $kind (episode, entity or fact) whose search terms may be
// of an earlier rule, after $after in uuid order: each one's uuid and the text its
// terms are made of (content; name and summary; relation name and fact), as
// graph.Terms makes them when they are written.
CALL () {
  WITH $kind AS kind WHERE kind = 'episode'
  MATCH (e:Episodic) WHERE e.uuid > $after
  RETURN e.uuid AS uuid, e.content AS text ORDER BY uuid LIMIT $limit
  UNION ALL
  WITH $kind AS kind WHERE kind = 'entity'
  MATCH (n:Entity) WHERE n.uuid > $after
  RETURN n.uuid AS uuid, n.name + ' ' + coalesce(n.summary, '') AS text ORDER BY uuid LIMIT $limit
  UNION ALL
  WITH $kind AS kind WHERE kind = 'fact'
  MATCH ()-[r:RELATES_TO]->() WHERE r.uuid > $after
  RETURN r.uuid AS uuid, r.name + ' ' + coalesce(r.fact, '') AS text ORDER BY uuid LIMIT $limit
}
RETURN uuid, text
