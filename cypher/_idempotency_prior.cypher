// The episode an earlier request with ep's (hashed) idempotency key (ep.key; null for
// a write without one) stored, when it lies in the space ep is written to (prior), and
// whether the key is used at all (used: in another space it is another request,
// refused without saying more of that episode). The key is scoped to host key and
// requester by its hash already.
  OPTIONAL MATCH (stored:Episodic {idempotency_key: ep.key})
  WITH ep, CASE WHEN stored.group_id = ep.group_id THEN stored END AS prior, stored IS NOT NULL AS used
