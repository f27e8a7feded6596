// Add what one attempt cost (cost: {chat_calls, prompt_tokens, completion_tokens,
// embedding_calls, embedding_inputs, embedding_tokens, seconds}) to the episode e's
// totals, in the write that records the attempt's outcome; e's write lock must be
// held already (taken by SET _lock or episode_lease_check in the same transaction), so
// two writes never read the same total.
SET e.cost_chat_calls = coalesce(e.cost_chat_calls, 0) + cost.chat_calls,
    e.cost_prompt_tokens = coalesce(e.cost_prompt_tokens, 0) + cost.prompt_tokens,
    e.cost_completion_tokens = coalesce(e.cost_completion_tokens, 0) + cost.completion_tokens,
    e.cost_embedding_calls = coalesce(e.cost_embedding_calls, 0) + cost.embedding_calls,
    e.cost_embedding_inputs = coalesce(e.cost_embedding_inputs, 0) + cost.embedding_inputs,
    e.cost_embedding_tokens = coalesce(e.cost_embedding_tokens, 0) + cost.embedding_tokens,
    e.cost_seconds = coalesce(e.cost_seconds, 0.0) + cost.seconds
