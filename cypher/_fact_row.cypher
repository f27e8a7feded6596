r {.*, fact_embedding: CASE WHEN $embeddings THEN r.fact_embedding END, fact_terms: null} AS r,
{uuid: startNode(r).uuid, name: startNode(r).name, group_id: startNode(r).group_id, summary: startNode(r).summary,
 created_at: startNode(r).created_at, labels: labels(startNode(r))} AS s,
{uuid: endNode(r).uuid, name: endNode(r).name, group_id: endNode(r).group_id, summary: endNode(r).summary,
 created_at: endNode(r).created_at, labels: labels(endNode(r))} AS t
