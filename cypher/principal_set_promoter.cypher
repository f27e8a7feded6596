MERGE (p:Principal {id: $id})
SET p.promoter = $promoter
