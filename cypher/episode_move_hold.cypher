// Before a memory moves into another space (episode_update), hold that space's agent
// or team as a new write to it would: a row when it still exists, none when it is
// gone, and an erasure or a dissolution that comes later finds the moved memory.
WITH {org: $org, holder: $holder, team: $team, authorized_at: $authorized_at} AS ep
{{space_hold}}
RETURN true AS held
