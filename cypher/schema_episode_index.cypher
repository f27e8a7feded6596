// Whether the episode_content fulltext index is built as 001_graphiti builds it:
// eventually consistent. No row when there is no such index yet.
SHOW FULLTEXT INDEXES YIELD name, options
WHERE name = 'episode_content'
RETURN coalesce(options.indexConfig.`fulltext.eventually_consistent`, false) AS eventually_consistent
