OPTIONAL MATCH (x:Episodic) WHERE x.uuid IN r.episodes
WITH r, count(x) AS stored, count(x.expires_at) AS expiring, max(x.expires_at) AS latest
SET r.supported_until = CASE WHEN stored > 0 AND expiring = stored THEN latest END
