// Everything one group commit saves, in one statement: the entities, the episodes'
// mentions of them, the facts between them, and the episodes done (and what the
// attempts cost, refused ones included), all in one map, $save (one plan whichever of
// its lists are empty: as six parameters, each mix of empty and full lists was a plan
// of its own, seconds of Neo4j's CPU each). Each part keeps to
// the space of what it writes; group_id is set last (see episodeParams).
CALL () {
  // New entities, and new summaries of existing ones. An entity is only ever matched
  // within its own space.
  UNWIND $save.entities AS x
  MERGE (n:Entity {uuid: x.uuid})
  ON CREATE SET n.name = x.name, n.created_at = x.created_at, n.group_id = x.group_id
  WITH n, x
  WHERE n.group_id = x.group_id
  SET n.summary = x.summary, n.description = x.description, n.name_embedding = x.name_embedding, n.name_terms = x.name_terms,
      n.name_words = x.name_words, n.aliases = x.aliases,
      // Its type's attributes, as node properties of their names (Graphiti's custom
      // entity types), and every value they were stated to have: the pipeline only
      // adds to what it read, so a row without a history leaves the stored one.
      n.attribute_history = coalesce(x.attribute_history, n.attribute_history)
  SET n += x.attributes
  SET n:$(x.labels)
  SET n.group_id = x.group_id
}
CALL () {
  // Episode -> entity mentions, each within the episode's own space, with what the
  // episode said of the entity (memgate's; "" for nothing), from which the entity's
  // description is made again when the episode goes (episode_unlink).
  UNWIND $save.mentions AS m
  MATCH (ep:Episodic {uuid: m.episode}), (n:Entity {uuid: m.entity})
  WHERE n.group_id = ep.group_id
  MERGE (ep)-[r:MENTIONS]->(n)
  ON CREATE SET r.uuid = randomUUID(), r.created_at = $now
  SET r.group_id = ep.group_id, r.description = m.description
}
CALL () {
  // New facts, and existing ones with more supporting episodes or new temporal bounds.
  // Both ends must be entities of the fact's own space. The first of its episodes is
  // the one whose words it is (episode_unlink relies on it).
  UNWIND $save.facts AS f
  MATCH (s:Entity {uuid: f.source}), (t:Entity {uuid: f.target})
  WHERE s.group_id = f.group_id AND t.group_id = f.group_id
  MERGE (s)-[r:RELATES_TO {uuid: f.uuid}]->(t)
  SET r.name = f.name, r.fact = f.fact, r.fact_embedding = f.fact_embedding, r.episodes = f.episodes,
      r.created_at = f.created_at, r.expired_at = f.expired_at, r.valid_at = f.valid_at,
      r.invalid_at = f.invalid_at, r.fact_terms = f.fact_terms,
      r.valid_at_assumed = f.valid_at_assumed, r.overruled_valid_at = f.overruled_valid_at,
      r.reference_time = coalesce(f.reference_time, r.reference_time), r.conflicts = f.conflicts,
      // why a fact given an edge type has the generic relation instead (extraction)
      r.note = f.note
  // Its edge type's attributes, as edge properties of their names.
  SET r += f.attributes
  SET r.group_id = f.group_id
}
CALL () {
  // Contradictions held for review (memory.conflicts: review), each in the space of
  // its two facts, open (keep null) until resolved.
  UNWIND $save.conflicts AS c
  MERGE (x:Conflict {uuid: c.uuid})
  ON CREATE SET x.created_at = c.created_at, x.old_fact = c.old, x.new_fact = c.new, x.episode = c.episode,
                x._opened = true
  SET x.group_id = c.group_id
  // conflict.opened, once: when this statement created it (webhook_emit).
  WITH x
  WHERE x._opened
  REMOVE x._opened
  WITH {id: randomUUID(), kind: 'conflict.opened', group_id: x.group_id, subject: x.uuid, memory: x.episode,
        at: $now} AS ev
  CALL (ev) {
{{webhook_emit}}
  }
}
CALL () {
  // The episodes, done, with what their attempt cost added to their totals.
  UNWIND $save.episodes AS x
  MATCH (e:Episodic {uuid: x.uuid})
  SET e.status = 'done', e.entity_edges = x.entity_edges, e.context_episodes = x.context, e.last_error = '',
      e.lease_owner = null, e.lease_expires_at = null, e.retry_at = null, e.content_embedding = x.embedding,
      e.turn_embedding = x.turn_embedding, e.turn_weight = CASE WHEN x.turn_embedding IS NULL THEN null ELSE x.turn_weight END
  WITH e, x.cost AS cost
  {{cost_add}}
  // memory.done (webhook_emit).
  WITH {id: randomUUID(), kind: 'memory.done', group_id: e.group_id, subject: e.uuid, agent: e.agent_id,
        at: $now} AS ev
  CALL (ev) {
{{webhook_emit}}
  }
}
CALL () {
  // The episodes whose attempt lost its lease (episode_lease_check locked them): their
  // writes are refused, what the attempt cost stays with the memory.
  UNWIND $save.charged AS x
  MATCH (e:Episodic {uuid: x.uuid})
  WITH e, x.cost AS cost
  {{cost_add}}
}
CALL () {
  // How long each fact written here stays visible: until the latest expires_at of the
  // episodes supporting it, or for good (null) when one of them never expires or none
  // is stored. Reads hide a fact from its supported_until on (memory expiry).
  UNWIND $save.facts AS f
  MATCH ()-[r:RELATES_TO {uuid: f.uuid}]->()
  {{fact_support}}
}
CALL () {
  // The same for each entity written or mentioned here, from the episodes mentioning it.
  UNWIND [m IN $save.mentions | m.entity] + [x IN $save.entities | x.uuid] AS id
  WITH DISTINCT id
  MATCH (n:Entity {uuid: id})
  {{entity_support}}
}
