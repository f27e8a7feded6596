// Record that the schema of $version is applied. The version only rises: an older
// memgate starting beside a newer one (a rolling upgrade) applies its migrations,
// which the newer schema already holds, and must not write its older number back.
MERGE (s:MemgateSchema {id: 'memgate'})
SET s.version = CASE WHEN s.version IS NULL OR s.version < $version THEN $version ELSE s.version END,
    s.applied_at = datetime()
