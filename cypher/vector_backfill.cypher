// Vectors stored as empty lists (what an earlier memgate wrote for a text of no words)
// become absent: every vector function fails on an empty list, and one such item
// failed vector search over its whole space. Migrate runs it at every start, after the
// schema; it finds nothing to do once none is left.
CALL () { MATCH (n:Entity) WHERE size(n.name_embedding) = 0 SET n.name_embedding = null }
CALL () { MATCH (e:Episodic) WHERE size(e.content_embedding) = 0 SET e.content_embedding = null }
CALL () { MATCH ()-[r:RELATES_TO]->() WHERE size(r.fact_embedding) = 0 SET r.fact_embedding = null }
RETURN true AS done
