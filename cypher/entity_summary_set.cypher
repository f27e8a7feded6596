// Write entities' summaries made again (see entity_summary_sources): summary (which the
// node_name_and_summary fulltext index reads), description, and name_terms (the words
// of name and summary the exact search plan scores), each entity within $group_id;
// and its attributes as the statements left say (x.attributes: null for one no
// statement is left of, which SET += removes).
UNWIND $entities AS x
MATCH (n:Entity {uuid: x.uuid})
WHERE n.group_id = $group_id
SET n.summary = x.summary, n.description = x.description, n.name_terms = x.name_terms,
    n.attribute_history = x.attribute_history
SET n += x.attributes
