// Contradictions held for review (memory.conflicts: review): one :Conflict node per
// pair, in the space of its facts.
CREATE CONSTRAINT conflict_uuid IF NOT EXISTS FOR (c:Conflict) REQUIRE c.uuid IS UNIQUE;
CREATE INDEX conflict_group IF NOT EXISTS FOR (c:Conflict) ON (c.group_id);
