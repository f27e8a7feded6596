// Vector search over fact embeddings within the visible set. Two plans, chosen by
// the size of the visible set (counted up to $exact_max + 1 from the group_id index):
// exact cosine over every visible fact when there are at most $exact_max — an
// approximate index over all spaces followed by a group filter loses recall for a
// small set, since its nearest neighbours belong to other spaces — else the
// edge_fact_embedding vector index asked for $k candidates and filtered (the index
// keeps the vectors unquantized, so its score is the exact cosine, see 003_vector).
// The caller asks again with a larger $k when the filter left fewer than $limit
// (indexed is true), as happens when other spaces hold many facts alike (the same
// names in many agents' memories). Scores are Neo4j's cosine similarity, mapped to
// [0, 1]. Rows leave out the embeddings and the words (_fact_row) unless $embeddings
// asks for them.
MATCH ()-[v:RELATES_TO]->() WHERE v.group_id IN $group_ids
WITH v LIMIT $exact_max + 1
WITH collect(v) AS visible
OPTIONAL CALL (visible) {
  WITH visible WHERE size(visible) <= $exact_max
  UNWIND visible AS r
  WITH r WHERE r.fact_embedding IS NOT NULL AND {{fact_filter}} AND {{fact_typed}}
  RETURN r, vector.similarity.cosine(r.fact_embedding, $embedding) AS score ORDER BY score DESC LIMIT $limit
  UNION ALL
  WITH visible WHERE size(visible) > $exact_max
  CALL db.index.vector.queryRelationships('edge_fact_embedding', $k, $embedding) YIELD relationship AS r, score
  WHERE {{fact_filter}} AND {{fact_typed}}
  RETURN r, score ORDER BY score DESC LIMIT $limit
}
RETURN {{fact_row}}, score, size(visible) > $exact_max AS indexed
