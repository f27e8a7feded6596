n {.*, name_embedding: CASE WHEN $embeddings THEN n.name_embedding END, name_terms: null, name_words: null, labels: labels(n)} AS n
