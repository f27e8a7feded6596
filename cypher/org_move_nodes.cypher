// Move every node of the implicit organization into $org: its group_id (and an audit
// event's space) gains the organization's $prefix, and its agents, teams and
// requesters their org. Run in an auto-commit transaction, a batch at a time; a node
// already moved starts with "org-" and is not matched again, so the move can be run
// again after an interruption.
MATCH (n)
WHERE (n.group_id IS NOT NULL AND NOT n.group_id STARTS WITH 'org-')
   OR ((n:Agent OR n:Team OR n:Principal) AND n.org = '')
CALL (n) {
  SET n.group_id = CASE WHEN n.group_id IS NULL THEN null ELSE $prefix + n.group_id END
  SET n.space = CASE WHEN n:AuditEvent AND n.space <> '' AND NOT n.space STARTS WITH 'org-'
                     THEN $prefix + n.space ELSE n.space END
  SET n.org = CASE WHEN n:Agent OR n:Team OR n:Principal THEN $org ELSE n.org END
} IN TRANSACTIONS OF 5000 ROWS
RETURN count(n) AS moved
