// Records that every stored search term is of rule $terms.
MERGE (s:MemgateSchema {id: 'memgate'})
SET s.terms = $terms
