n {.*, name_embedding: CASE WHEN $embeddings THEN n.name_embedding END, name_terms: null, labels: labels(n)} AS n
