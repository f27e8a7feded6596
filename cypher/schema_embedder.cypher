// The embedder whose vectors the database holds ($name: its model and prefixes), as
// the first start that found none recorded saw it: $name when nothing was embedded
// yet, 'unrecorded' when an earlier memgate had embedded memories without saying
// with what. Returns what is recorded; a start whose embedder is another warns (its
// query vectors are compared with vectors of another model).
MERGE (s:MemgateSchema {id: 'memgate'})
WITH s, coalesce(s.embedder,
  CASE WHEN EXISTS { MATCH (e:Episodic) WHERE e.content_embedding IS NOT NULL } THEN 'unrecorded' ELSE $name END) AS recorded
SET s.embedder = recorded
RETURN recorded
