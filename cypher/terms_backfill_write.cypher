// Writes the search terms of a batch of items of $kind ($rows: uuid, the text read,
// terms), as terms_backfill_read read them, each only while its text is still the one
// read: an item written meanwhile has its terms from its own write.
UNWIND $rows AS x
CALL (x) {
  WITH x WHERE $kind = 'episode'
  MATCH (e:Episodic {uuid: x.uuid}) WHERE e.content = x.text
  SET e.content_terms = x.terms
}
CALL (x) {
  WITH x WHERE $kind = 'entity'
  MATCH (n:Entity {uuid: x.uuid}) WHERE n.name + ' ' + coalesce(n.summary, '') = x.text
  SET n.name_terms = x.terms
}
CALL (x) {
  WITH x WHERE $kind = 'fact'
  MATCH ()-[r:RELATES_TO {uuid: x.uuid}]->() WHERE r.name + ' ' + coalesce(r.fact, '') = x.text
  SET r.fact_terms = x.terms
}
RETURN count(*) AS written
