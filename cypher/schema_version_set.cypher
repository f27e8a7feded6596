MERGE (s:MemgateSchema {id: 'memgate'})
SET s.version = $version, s.applied_at = datetime()
