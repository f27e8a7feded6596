// Graphiti's own schema, under Graphiti's names, so Graphiti's queries and Neo4j
// Browser users find what they expect. The uuid lookups are uniqueness constraints
// rather than plain range indexes (see 002); they carry Graphiti's index names.
CREATE CONSTRAINT entity_uuid IF NOT EXISTS FOR (n:Entity) REQUIRE n.uuid IS UNIQUE;
CREATE CONSTRAINT episode_uuid IF NOT EXISTS FOR (n:Episodic) REQUIRE n.uuid IS UNIQUE;
CREATE CONSTRAINT community_uuid IF NOT EXISTS FOR (n:Community) REQUIRE n.uuid IS UNIQUE;
CREATE CONSTRAINT relation_uuid IF NOT EXISTS FOR ()-[e:RELATES_TO]-() REQUIRE e.uuid IS UNIQUE;
CREATE CONSTRAINT mention_uuid IF NOT EXISTS FOR ()-[e:MENTIONS]-() REQUIRE e.uuid IS UNIQUE;
CREATE CONSTRAINT has_member_uuid IF NOT EXISTS FOR ()-[e:HAS_MEMBER]-() REQUIRE e.uuid IS UNIQUE;
CREATE INDEX entity_group_id IF NOT EXISTS FOR (n:Entity) ON (n.group_id);
CREATE INDEX episode_group_id IF NOT EXISTS FOR (n:Episodic) ON (n.group_id);
CREATE INDEX relation_group_id IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.group_id);
CREATE INDEX mention_group_id IF NOT EXISTS FOR ()-[e:MENTIONS]-() ON (e.group_id);
CREATE INDEX name_entity_index IF NOT EXISTS FOR (n:Entity) ON (n.name);
CREATE INDEX created_at_entity_index IF NOT EXISTS FOR (n:Entity) ON (n.created_at);
CREATE INDEX created_at_episodic_index IF NOT EXISTS FOR (n:Episodic) ON (n.created_at);
CREATE INDEX valid_at_episodic_index IF NOT EXISTS FOR (n:Episodic) ON (n.valid_at);
CREATE INDEX name_edge_index IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.name);
CREATE INDEX created_at_edge_index IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.created_at);
CREATE INDEX expired_at_edge_index IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.expired_at);
CREATE INDEX valid_at_edge_index IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.valid_at);
CREATE INDEX invalid_at_edge_index IF NOT EXISTS FOR ()-[e:RELATES_TO]-() ON (e.invalid_at);
// episode_content is eventually consistent: Neo4j applies a commit's episodes to it
// after the commit, in the background, where a consistent fulltext index writes a
// Lucene segment inside every commit. That was 42% of Neo4j's CPU samples writing
// memories; a lone write transaction now takes 1.5-1.8 ms at p50 instead of 3.2-3.9
// (BENCHMARKS.md, "Writes near their floor"). episode_search waits for the index to take in what was committed before
// it asks the index, so a search still finds every memory written before it. Migrate
// rebuilds an index created otherwise (by an earlier memgate, or by Graphiti).
CREATE FULLTEXT INDEX episode_content IF NOT EXISTS
  FOR (e:Episodic) ON EACH [e.content, e.source, e.source_description, e.group_id]
  OPTIONS {indexConfig: {`fulltext.eventually_consistent`: true}};
CREATE FULLTEXT INDEX node_name_and_summary IF NOT EXISTS
  FOR (n:Entity) ON EACH [n.name, n.summary, n.group_id];
CREATE FULLTEXT INDEX community_name IF NOT EXISTS
  FOR (n:Community) ON EACH [n.name, n.group_id];
CREATE FULLTEXT INDEX edge_name_and_fact IF NOT EXISTS
  FOR ()-[e:RELATES_TO]-() ON EACH [e.name, e.fact, e.group_id];
