// A page of the entities of the given spaces, by name compared without case, then id:
// those _entity_typed selects (types and attributes) whose name starts with
// $name_prefix, without case. The cursor is the last row of the previous page (its
// lower-cased name and id).
MATCH (n:Entity)
WHERE n.group_id IN $group_ids
  AND (n.supported_until IS NULL OR n.supported_until > datetime())
  AND {{entity_typed}}
  AND toLower(n.name) STARTS WITH toLower($name_prefix)
WITH n, toLower(n.name) AS key
WHERE $cursor_name IS NULL OR key > $cursor_name OR (key = $cursor_name AND n.uuid > $cursor_uuid)
WITH n, key ORDER BY key, n.uuid
LIMIT $limit
RETURN {{entity_row}}, key
