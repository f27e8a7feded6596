// One step of the breadth-first walk from a search's center entity: the entities of
// the visible set one fact away from $frontier that were not reached before, at most
// $max. Every node and fact on the way is checked against the visible set.
UNWIND $frontier AS id
MATCH (n:Entity {uuid: id})-[r:RELATES_TO]-(m:Entity)
WHERE n.group_id IN $group_ids AND r.group_id IN $group_ids AND m.group_id IN $group_ids
  AND (r.supported_until IS NULL OR r.supported_until > datetime())
  AND (m.supported_until IS NULL OR m.supported_until > datetime())
  AND NOT m.uuid IN $seen
RETURN DISTINCT m.uuid AS uuid
LIMIT $max
