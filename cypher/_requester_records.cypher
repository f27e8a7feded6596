// The nodes of an organization ($org_prefix) outside the spaces an erasure empties
// ($group_ids) that record requester $id, as n: a memory or version it wrote
// (requester_id, host_key: its end-user JWT host $jwt_host), changed (updated_by,
// replaced_by) or promoted (promoted_by, or promoted_from_group_id: its shared space
// $shared), a conflict it resolved (resolved_by), and a memory or version of one of the
// agents it owned ($agents: memories of its agents in teams and global, which outlive
// them). Each property is looked up in its own index (012_erasure, 016_episode_vector);
// UNION keeps each node once.
CALL () {
  MATCH (n:Episodic {requester_id: $id}) RETURN n
  UNION
  MATCH (n:Episodic {host_key: $jwt_host}) RETURN n
  UNION
  MATCH (n:Episodic {updated_by: $id}) RETURN n
  UNION
  MATCH (n:Episodic {promoted_by: $id}) RETURN n
  UNION
  MATCH (n:Episodic {promoted_from_group_id: $shared}) RETURN n
  UNION
  MATCH (n:MemoryVersion {requester_id: $id}) RETURN n
  UNION
  MATCH (n:MemoryVersion {host_key: $jwt_host}) RETURN n
  UNION
  MATCH (n:MemoryVersion {updated_by: $id}) RETURN n
  UNION
  MATCH (n:MemoryVersion {promoted_by: $id}) RETURN n
  UNION
  MATCH (n:MemoryVersion {replaced_by: $id}) RETURN n
  UNION
  MATCH (n:MemoryVersion {promoted_from_group_id: $shared}) RETURN n
  UNION
  MATCH (n:Conflict {resolved_by: $id}) RETURN n
  UNION
  MATCH (n:Episodic) WHERE n.agent_id IN $agents RETURN n
  UNION
  MATCH (n:MemoryVersion) WHERE n.agent_id IN $agents RETURN n
}
WITH n
WHERE NOT n.group_id IN $group_ids
  AND CASE $org_prefix WHEN '' THEN NOT n.group_id STARTS WITH 'org-' ELSE n.group_id STARTS WITH $org_prefix END
