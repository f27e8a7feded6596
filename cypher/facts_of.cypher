// The facts of one space that touch the given entities.
UNWIND $uuids AS id
MATCH (n:Entity {uuid: id})-[r:RELATES_TO]-(:Entity)
WHERE n.group_id = $group_id AND r.group_id = $group_id
RETURN DISTINCT r, startNode(r).uuid AS source, endNode(r).uuid AS target
