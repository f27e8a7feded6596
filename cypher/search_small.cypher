// Every search method over a small visible set in one round trip: facts, entities and
// episodes by text and by vector, each scored over the visible items themselves (the
// exact plans of fact_search_text, fact_search_vector, entity_search_text,
// entity_search_vector, episode_search and episode_search_vector). It answers only
// when the visible set holds at most $exact_max facts, $exact_max entities and
// $exact_max episodes (counted from the group_id indexes without reading more);
// otherwise it returns no row, and the caller runs each method's own query, whose
// index plans are made for large sets. $facts, $entities and $episodes say which kinds
// to search; a null $embedding leaves out the vector methods. Each list holds at most
// $limit hits, best first: [fact row..., score] for facts (_fact_row), [entity row,
// score] for entities, [episode, score] for episodes.
// CYPHER replan=skip: the plan Neo4j made first is kept when the statistics change;
// planning this query costs 0.5-0.9 s of Neo4j's CPU, and it starts from unique
// constraints or group_id indexes whatever the statistics (docs/architecture.md,
// "Plans kept").
CYPHER replan=skip
CALL () {
  MATCH ()-[v:RELATES_TO]->() WHERE v.group_id IN $group_ids
  WITH v LIMIT $exact_max + 1
  RETURN collect(v) AS facts
}
CALL () {
  MATCH (v:Entity) WHERE v.group_id IN $group_ids
  WITH v LIMIT $exact_max + 1
  RETURN collect(v) AS entities
}
CALL () {
  MATCH (v:Episodic) WHERE v.group_id IN $group_ids
  WITH v LIMIT $exact_max + 1
  RETURN collect(v) AS episodes
}
WITH facts, entities, episodes
WHERE size(facts) <= $exact_max AND size(entities) <= $exact_max AND size(episodes) <= $exact_max
CALL (facts) {
  UNWIND CASE WHEN $facts THEN facts ELSE [] END AS r
  WITH r, size(facts) AS total WHERE {{fact_filter}} AND {{fact_typed}}
  WITH r AS x, total, coalesce(r.fact_terms, ' ' + toLower(r.fact) + ' ') AS text
  {{bm25}}
  WITH x AS r, score
  WITH {{fact_row}}, score
  RETURN collect([r, s, t, score]) AS fact_text
}
CALL (facts) {
  UNWIND CASE WHEN $facts AND $embedding IS NOT NULL THEN facts ELSE [] END AS r
  WITH r WHERE r.fact_embedding IS NOT NULL AND {{fact_filter}} AND {{fact_typed}}
  WITH r, vector.similarity.cosine(r.fact_embedding, $embedding) AS score ORDER BY score DESC LIMIT $limit
  WITH {{fact_row}}, score
  RETURN collect([r, s, t, score]) AS fact_vector
}
CALL (entities) {
  UNWIND CASE WHEN $entities THEN entities ELSE [] END AS n
  WITH n, size(entities) AS total WHERE {{entity_filter}} AND {{entity_typed}}
  WITH n AS x, total, coalesce(n.name_terms, ' ' + toLower(n.name) + ' ') AS text
  {{bm25}}
  WITH x AS n, score
  WITH {{entity_row}}, score
  RETURN collect([n, score]) AS entity_text
}
CALL (entities) {
  UNWIND CASE WHEN $entities AND $embedding IS NOT NULL THEN entities ELSE [] END AS n
  WITH n WHERE n.name_embedding IS NOT NULL AND {{entity_filter}} AND {{entity_typed}}
  WITH n, vector.similarity.cosine(n.name_embedding, $embedding) AS score ORDER BY score DESC LIMIT $limit
  WITH {{entity_row}}, score
  RETURN collect([n, score]) AS entity_vector
}
CALL (episodes) {
  UNWIND CASE WHEN $episodes THEN episodes ELSE [] END AS x
  WITH x, size(episodes) AS total WHERE {{episode_filter}}
  WITH x, total, coalesce(x.content_terms, ' ' + toLower(x.content) + ' ') AS text
  {{bm25}}
  RETURN collect([x, score]) AS episode_text
}
CALL (episodes) {
  UNWIND CASE WHEN $episodes AND $embedding IS NOT NULL THEN episodes ELSE [] END AS x
  WITH x WHERE x.content_embedding IS NOT NULL AND {{episode_filter}}
  {{episode_meaning}}
  RETURN collect([x, score]) AS episode_vector
}
RETURN fact_text, fact_vector, entity_text, entity_vector, episode_text, episode_vector
