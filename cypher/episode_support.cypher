// After an episode's expires_at changed: how long each fact and entity it supports
// stays visible, computed as graph_save does (_fact_support, _entity_support).
MATCH (e:Episodic {uuid: $uuid})
CALL (e) {
  MATCH (:Entity)-[r:RELATES_TO]->(:Entity)
  WHERE r.group_id = e.group_id AND e.uuid IN r.episodes
  {{fact_support}}
}
CALL (e) {
  MATCH (e)-[:MENTIONS]->(n:Entity)
  {{entity_support}}
}
RETURN e.uuid AS uuid
