// Episodes not done, by status, in the spaces whose group_id starts with $scope.
MATCH (e:Episodic)
USING INDEX e:Episodic(status, group_id)
WHERE e.status IN ['queued', 'processing', 'failed'] AND e.group_id STARTS WITH $scope
RETURN e.status AS status, count(*) AS n
