// Ranks the episodes x coming in by meaning: the mean of the cosine similarity to
// $embedding of their content alone (content_embedding) and of their content read
// after the turn before it (turn_embedding; the content alone when they follow none).
// Leaves the best $limit rows (x, score), best first.
WITH x, (vector.similarity.cosine(x.content_embedding, $embedding)
  + vector.similarity.cosine(coalesce(x.turn_embedding, x.content_embedding), $embedding)) / 2 AS score
ORDER BY score DESC LIMIT $limit
