// What the memories of the spaces $group_ids created within [$window.created_after,
// $window.created_before) cost, summed (see _cost_add), and how many there are: only
// memories a read would show (not expired), as the lists filter them.
MATCH (x:Episodic)
WHERE {{episode_filter}}
RETURN count(x) AS memories,
       sum(coalesce(x.cost_chat_calls, 0)) AS chat_calls,
       sum(coalesce(x.cost_prompt_tokens, 0)) AS prompt_tokens,
       sum(coalesce(x.cost_completion_tokens, 0)) AS completion_tokens,
       sum(coalesce(x.cost_embedding_calls, 0)) AS embedding_calls,
       sum(coalesce(x.cost_embedding_inputs, 0)) AS embedding_inputs,
       sum(coalesce(x.cost_embedding_tokens, 0)) AS embedding_tokens,
       sum(coalesce(x.cost_seconds, 0.0)) AS seconds,
       sum(CASE WHEN x.cost_estimated THEN 1 ELSE 0 END) > 0 AS estimated
