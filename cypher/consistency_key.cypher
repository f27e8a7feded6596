// The deployment's key for consistency tokens (neo4jstore/consistency.go): made once,
// by the first memgate that asks for it, on the schema node every memgate of the
// deployment shares (its id is unique, so two asking at once find one node).
MERGE (s:MemgateSchema {id: 'memgate'})
SET s.consistency_key = coalesce(s.consistency_key, $key)
RETURN s.consistency_key AS key
