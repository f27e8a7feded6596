// The schema version recorded by the last successful migration.
MATCH (s:MemgateSchema {id: 'memgate'})
RETURN s.version AS version
