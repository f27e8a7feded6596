// Ranks the episodes x coming in by meaning: by the mean of the query's cosine
// similarity with their content alone and with their content read after the turn
// before it, in one comparison: with turn_embedding, the two's mean direction, and
// turn_weight, the mean's length (graph.TurnMeaning), as Neo4j scores a cosine c:
// (1 + c) / 2. By content_embedding alone when they follow no turn. Leaves the best
// $limit rows (x, score), best first.
WITH x, CASE WHEN x.turn_embedding IS NULL THEN vector.similarity.cosine(x.content_embedding, $embedding)
  ELSE (1 + (2 * vector.similarity.cosine(x.turn_embedding, $embedding) - 1) * x.turn_weight) / 2 END AS score
ORDER BY score DESC LIMIT $limit
