// Vector search over fact embeddings within the visible set: exact cosine over every
// visible fact, best first. A vector index holds every space's facts and its nearest
// neighbours would be chosen among all of them, so which visible facts made its
// candidates, and so their ranks, would depend on facts the requester cannot read; the
// visible facts are compared themselves instead. Scores are Neo4j's cosine
// similarity, mapped to [0, 1]. Rows leave out the embeddings and the words
// (_fact_row) unless $embeddings asks for them.
MATCH ()-[r:RELATES_TO]->() WHERE r.group_id IN $group_ids
WITH r WHERE r.fact_embedding IS NOT NULL AND {{fact_filter}} AND {{fact_typed}}
WITH r, vector.similarity.cosine(r.fact_embedding, $embedding) AS score ORDER BY score DESC LIMIT $limit
RETURN {{fact_row}}, score
