// The rule the stored search terms were made by (graph.Terms), as the last start that
// rewrote them recorded it; null before any did.
MERGE (s:MemgateSchema {id: 'memgate'})
RETURN s.terms AS terms
