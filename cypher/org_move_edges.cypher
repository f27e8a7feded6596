// Move every relationship of the implicit organization into $org (after
// org_move_nodes): its group_id gains the organization's $prefix.
MATCH ()-[r]->()
WHERE r.group_id IS NOT NULL AND NOT r.group_id STARTS WITH 'org-'
CALL (r) {
  SET r.group_id = $prefix + r.group_id
} IN TRANSACTIONS OF 5000 ROWS
RETURN count(r) AS moved
