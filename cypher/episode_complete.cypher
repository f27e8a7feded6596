UNWIND $episodes AS x
MATCH (e:Episodic {uuid: x.uuid})
SET e.status = 'done', e.entity_edges = x.entity_edges, e.last_error = '',
    e.lease_owner = null, e.lease_expires_at = null, e.retry_at = null
