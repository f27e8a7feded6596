// Add what one attempt cost (cost: {attempt, chat_calls, prompt_tokens,
// completion_tokens, embedding_calls, embedding_inputs, embedding_tokens, seconds,
// estimated}) to
// the episode e's totals, in the write that records the attempt's outcome, once per
// attempt: e.cost_attempts keeps the last 16 attempts counted, so a second write of the
// same attempt's cost (a save that commits after shutdown handed the episode back, and
// found its lease gone) adds nothing. e's write lock must be held already (taken by
// SET _lock or episode_lease_check in the same transaction), so two writes never read
// the same total.
WITH e, cost, cost.attempt IN coalesce(e.cost_attempts, []) AS counted
SET e.cost_chat_calls = coalesce(e.cost_chat_calls, 0) + CASE WHEN counted THEN 0 ELSE cost.chat_calls END,
    e.cost_prompt_tokens = coalesce(e.cost_prompt_tokens, 0) + CASE WHEN counted THEN 0 ELSE cost.prompt_tokens END,
    e.cost_completion_tokens = coalesce(e.cost_completion_tokens, 0) + CASE WHEN counted THEN 0 ELSE cost.completion_tokens END,
    e.cost_embedding_calls = coalesce(e.cost_embedding_calls, 0) + CASE WHEN counted THEN 0 ELSE cost.embedding_calls END,
    e.cost_embedding_inputs = coalesce(e.cost_embedding_inputs, 0) + CASE WHEN counted THEN 0 ELSE cost.embedding_inputs END,
    e.cost_embedding_tokens = coalesce(e.cost_embedding_tokens, 0) + CASE WHEN counted THEN 0 ELSE cost.embedding_tokens END,
    e.cost_seconds = coalesce(e.cost_seconds, 0.0) + CASE WHEN counted THEN 0.0 ELSE cost.seconds END,
    e.cost_estimated = coalesce(e.cost_estimated, false) OR (NOT counted AND cost.estimated),
    e.cost_attempts = CASE WHEN counted OR cost.attempt = '' THEN e.cost_attempts
                           ELSE (coalesce(e.cost_attempts, []) + cost.attempt)[-16..] END
