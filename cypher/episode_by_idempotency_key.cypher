// The episode an earlier request with the same (hashed) idempotency key stored in the
// space written to, and whether the key is used at all: what episode_create checks
// for each episode it is given, asked before a write counted against a quota.
WITH {key: $key, group_id: $group_id} AS ep
{{idempotency_prior}}
RETURN prior AS e, used
