// A space's episodes by status in time order: the claim checks that no older episode
// of the space is unfinished, and reads its latest done ones for context, without
// reading the space's whole history (episode_claim).
CREATE INDEX episode_group_status_created IF NOT EXISTS FOR (n:Episodic) ON (n.group_id, n.status, n.created_at);
// Replaced by episode_status_group (005), which also serves a scope.
DROP INDEX episode_status IF EXISTS;
