// Hold the agent the episode is written for (ep.holder: whose space it is, or whose
// memory it is in a team's, a shared or the global space) and the team whose space it
// is (ep.team), null where there is none, for the rest of the transaction, as a write
// must: the write lock is taken
// first and the holder looked up again under it, so an erasure (agent_erase_lock) or
// a dissolution (team_lock) either waits for this write and takes the episode too, or
// has committed and the row is dropped here. The holder must also be the one the
// write was judged against (ep.authorized_at: when the requester was resolved): an
// agent or team created since, with the same id after an erasure or a dissolution,
// is not, and the row is dropped too.
  OPTIONAL MATCH (a:Agent {org: ep.org, id: ep.holder})
  SET a._lock = true
  REMOVE a._lock
  WITH ep, a
  OPTIONAL MATCH (t:Team {org: ep.org, name: ep.team})
  SET t._lock = true
  REMOVE t._lock
  WITH ep, t
  WHERE (ep.holder IS NULL OR EXISTS { MATCH (x:Agent {org: ep.org, id: ep.holder})
          WHERE ep.authorized_at IS NULL OR x.created_at IS NULL OR x.created_at <= ep.authorized_at })
    AND (ep.team IS NULL OR EXISTS { MATCH (x:Team {org: ep.org, name: ep.team})
          WHERE ep.authorized_at IS NULL OR x.created_at IS NULL OR x.created_at <= ep.authorized_at })
