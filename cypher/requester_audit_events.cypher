// The audit events of an organization's system space ($system) that may name
// requester $id or one of the agents it owned ($agents): in who acted, what it was
// about, the host (an end user's JWT host carries the id), the space (its shared
// space's or its agents' group_ids) or the reason. Go decides which of them do
// (graph.Pseudonyms: an id as a word of its own).
MATCH (a:AuditEvent)
WHERE a.group_id = $system
  AND any(id IN [$id] + $agents WHERE a.actor CONTAINS id OR a.subject CONTAINS id OR a.host_key CONTAINS id
          OR a.space CONTAINS id OR a.reason CONTAINS id)
RETURN a.id AS id, a.actor AS actor, a.subject AS subject, a.host_key AS host_key, a.space AS space, a.reason AS reason
