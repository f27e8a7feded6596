MERGE (p:Principal {org: $org, id: $id})
SET p.promoter = $promoter
