OPTIONAL MATCH (x:Episodic)-[:MENTIONS]->(n)
WITH n, count(x) AS stored, count(x.expires_at) AS expiring, max(x.expires_at) AS latest
SET n.supported_until = CASE WHEN stored > 0 AND expiring = stored THEN latest END
