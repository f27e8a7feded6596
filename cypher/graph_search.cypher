// What the walk reached ($reached: uuid and distance from the center): per entity,
// whether it passes the entity filters, and the facts touching it that pass the fact
// filters, unless it is at the edge of the walk. Everything within the visible set.
UNWIND $reached AS x
MATCH (n:Entity {uuid: x.uuid})
WHERE n.group_id IN $group_ids
WITH n, x.distance AS distance
CALL (n, distance) {
  MATCH (n)-[r:RELATES_TO]-(:Entity)
  WHERE distance < $depth AND {{fact_filter}}
  RETURN collect([r, startNode(r), endNode(r)]) AS facts
}
RETURN n, distance, {{entity_filter}} AS wanted, facts
