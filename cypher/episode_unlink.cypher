// Detach one episode from what was derived from it in its space $group_id: the facts
// it alone supports are expired at $now when $retire (the episode's content changed:
// memgate learned they are no longer stated; nothing is deleted) and deleted otherwise
// (the episode is erased, or moved to another space where they are derived again).
// A fact others also support is in the words of the first of its episodes (the one
// that stated it first; graph_save): when that is this one, the fact is deleted too,
// whatever $retire, and the others are queued to be extracted again (attempts 0,
// lease ended), so they state it again in their own words; otherwise it only stops
// citing this one. Its mentions go, and entities left with neither mentions nor facts
// go, those at the ends of the facts deleted here among them. Everything stays within
// $group_id.
// Returns the entities it mentioned, or that ended the facts it supported, which
// remain: their summaries are made again from what still supports them (see
// entity_summary_sources), each with what its mention recorded in `removed`: [] when
// it had none, [null] when the mention recorded nothing (saved before mentions did).
// First, an extraction under way of another episode of the space read the graph
// before this change, and would write back what it read (this episode's words in a
// description, the facts only it supports): its lease ends, and it is queued again at
// once, the attempt not counted, so its result is refused (episode_lease_check) and
// it is extracted again from the graph as this leaves it. Its lock is taken first and
// it is read again (as in episode_claim): a save of it already under way is waited
// for, and then left alone, and the rest of this reads what it saved.
CALL () {
  MATCH (o:Episodic)
  WHERE o.group_id = $group_id AND o.status = 'processing' AND o.uuid <> $uuid
  SET o._lock = true
  WITH collect(o.uuid) AS locked
  UNWIND locked AS id
  MATCH (o:Episodic {uuid: id})
  REMOVE o._lock
  WITH o
  WHERE o.status = 'processing'
  SET o.status = 'queued', o.attempts = coalesce(o.attempts, 1) - 1, o.retry_at = null,
      o.lease_owner = null, o.lease_expires_at = null
}
MATCH (e:Episodic {uuid: $uuid})
WHERE e.group_id = $group_id
OPTIONAL MATCH (s:Entity)-[r:RELATES_TO]->(t:Entity)
WHERE r.group_id = $group_id AND $uuid IN r.episodes
WITH e, collect(r) AS facts, collect(s) + collect(t) AS ends
WITH e, ends, [f IN facts WHERE size(f.episodes) > 1 AND f.episodes[0] <> $uuid] AS shared,
     [f IN facts WHERE size(f.episodes) > 1 AND f.episodes[0] = $uuid] AS worded,
     [f IN facts WHERE size(f.episodes) <= 1] AS only
CALL (worded) {
  UNWIND worded AS r
  UNWIND r.episodes AS id
  WITH DISTINCT id
  MATCH (x:Episodic {uuid: id})
  WHERE x.group_id = $group_id AND id <> $uuid AND coalesce(x.extract, true)
  SET x.status = 'queued', x.attempts = 0, x.retry_at = null, x.last_error = '',
      x.lease_owner = null, x.lease_expires_at = null
}
FOREACH (r IN shared | SET r.episodes = [u IN r.episodes WHERE u <> $uuid])
FOREACH (r IN CASE WHEN $retire THEN only ELSE [] END | SET r.expired_at = coalesce(r.expired_at, $now))
FOREACH (r IN CASE WHEN $retire THEN worded ELSE only + worded END | DELETE r)
WITH e, ends
OPTIONAL MATCH (e)-[m:MENTIONS]->(n:Entity)
WITH e, ends, collect(m) AS mentions, collect(n) AS mentioned, collect(m {entity: n.uuid, .description}) AS said
FOREACH (m IN mentions | DELETE m)
SET e.entity_edges = []
WITH ends, mentioned, said
UNWIND mentioned + ends AS n
WITH DISTINCT n, mentioned, said
WHERE n.group_id = $group_id
WITH n, said, NOT (n)<-[:MENTIONS]-(:Episodic) AND NOT (n)-[:RELATES_TO]-(:Entity) AS orphan
FOREACH (x IN CASE WHEN orphan THEN [n] ELSE [] END | DELETE x)
WITH n, said, orphan
WHERE NOT orphan
RETURN n.uuid AS uuid, [x IN said WHERE x.entity = n.uuid | x.description] AS removed
