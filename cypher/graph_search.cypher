// What the walk reached ($reached: uuid and distance from the center): the $limit
// nearest entities that pass the entity filters, and the $limit nearest facts that
// pass the fact filters, a fact one step further than its nearer end. Nothing outside
// the visible set.
UNWIND $reached AS x
MATCH (n:Entity {uuid: x.uuid})
WHERE n.group_id IN $group_ids
WITH n, x.distance AS distance ORDER BY distance
WITH collect([n, distance]) AS reached
CALL (reached) {
  UNWIND reached AS x
  WITH x[0] AS n, x[1] AS distance
  WITH n, distance WHERE {{entity_filter}} AND {{entity_typed}}
  WITH {{entity_row}}, distance LIMIT $limit
  RETURN collect([n, distance]) AS entities
}
CALL (reached) {
  UNWIND reached AS x
  WITH x[0] AS n, x[1] AS distance
  WITH n, distance WHERE distance < $depth
  MATCH (n)-[r:RELATES_TO]-(:Entity)
  WHERE {{fact_filter}} AND {{fact_typed}}
  WITH r, min(distance) + 1 AS distance ORDER BY distance LIMIT $limit
  WITH {{fact_row}}, distance
  RETURN collect([r, s, t, distance]) AS facts
}
RETURN entities, facts
