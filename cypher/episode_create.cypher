// One episode, durable with status queued before the client hears 202.
CREATE (e:Episodic)
SET e = $props
RETURN e.uuid AS uuid
