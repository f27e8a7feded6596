// The nodes of an organization ($org_prefix) outside the spaces an erasure empties
// ($group_ids) that record requester $id, as n: a memory or version it wrote
// (requester_id, host_key: its end-user JWT host $jwt_host), changed (updated_by,
// replaced_by) or promoted (promoted_by, or promoted_from_group_id: its shared space
// $shared), a conflict it resolved (resolved_by).
CALL () {
  MATCH (n:Episodic)
  WHERE (n.requester_id = $id OR n.updated_by = $id OR n.promoted_by = $id OR n.host_key = $jwt_host
         OR n.promoted_from_group_id = $shared)
    AND NOT n.group_id IN $group_ids
    AND CASE $org_prefix WHEN '' THEN NOT n.group_id STARTS WITH 'org-' ELSE n.group_id STARTS WITH $org_prefix END
  RETURN n
  UNION
  MATCH (n:MemoryVersion)
  WHERE (n.requester_id = $id OR n.updated_by = $id OR n.promoted_by = $id OR n.replaced_by = $id
         OR n.host_key = $jwt_host OR n.promoted_from_group_id = $shared)
    AND NOT n.group_id IN $group_ids
    AND CASE $org_prefix WHEN '' THEN NOT n.group_id STARTS WITH 'org-' ELSE n.group_id STARTS WITH $org_prefix END
  RETURN n
  UNION
  MATCH (n:Conflict)
  WHERE n.resolved_by = $id
    AND NOT n.group_id IN $group_ids
    AND CASE $org_prefix WHEN '' THEN NOT n.group_id STARTS WITH 'org-' ELSE n.group_id STARTS WITH $org_prefix END
  RETURN n
}
