// requires: Neo4j 2026.01
// Once a second vector index over fact embeddings filtered by group_id, for in-index
// filtered fact search on Neo4j 2026.01. Vector search now compares the visible facts
// itself (fact_search_vector: an index's neighbours are chosen among every space's
// facts), so nothing here is made any more, and 016_episode_vector drops the index
// where an earlier memgate made it. The number stays, so the numbering stays
// contiguous.
