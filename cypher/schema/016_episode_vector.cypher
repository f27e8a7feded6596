// Memories ranked by meaning: extraction embeds each episode's content with the names
// and facts it finds (graph_save, content_embedding), and a memory stored without
// extraction is embedded as it is written; episode_search_vector compares the visible
// episodes' vectors itself, as fact and entity vector search do, so no vector index
// serves it. fact_group_embedding (013_fact_group_vector, an earlier memgate on Neo4j
// 2026.01) is dropped where it was made: no search reads it.
DROP INDEX fact_group_embedding IF EXISTS;
// A memory's neighbours in its conversation (episode_neighbours): the episodes of its
// space just before and after it by reference time.
CREATE INDEX episode_group_valid IF NOT EXISTS FOR (n:Episodic) ON (n.group_id, n.valid_at);
// An erasure finds the versions of the erased requester's agents that stay (in teams
// and global) by agent (_requester_records), as it finds their memories (episode_agent).
CREATE INDEX version_agent IF NOT EXISTS FOR (n:MemoryVersion) ON (n.agent_id);
