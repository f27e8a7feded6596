MATCH (e:Episodic)
WHERE e.status IN ['queued', 'processing', 'failed']
RETURN e.status AS status, count(*) AS n
