package graph

import "time"

// Cost is what extracting a memory has cost so far, summed over every attempt: those
// that failed (and were retried, or failed it for good) as well as the one that
// succeeded, and again after an update or a move queued it for extraction anew. The
// calls are those made to the model provider (a chat completion or an embedding call,
// each try of a retried call counted); the tokens are those the provider reported in
// its answers, its final usage chunk for a streamed answer, and for a call whose answer
// carried no usage (a stream read only until its answer was complete, a server that
// never reports it) memgate's own count of what it sent and read, which marks the cost
// Estimated; Seconds is the wall time of the attempts, from the claim to the
// write of each attempt's outcome. The offline extractor and the hashing embedder make
// no call. Every part is added in the same write as the outcome of its attempt (done,
// queued again to be retried, failed, or handed back), so a crash neither loses an
// attempt that was recorded nor counts one twice.
type Cost struct {
	// Attempt names the attempt whose cost this is, when it is one attempt's: the
	// store adds an attempt's cost to its memory once, whichever of its outcome writes
	// carries it first (a save that commits after shutdown handed its episode back
	// adds nothing more). Not summed, not shown; "" on what the store reads.
	Attempt string

	ChatCalls        int64
	PromptTokens     int64
	CompletionTokens int64
	EmbeddingCalls   int64
	EmbeddingInputs  int64 // texts sent to be embedded, in all the embedding calls
	EmbeddingTokens  int64
	Seconds          float64
	// Estimated: some of the tokens are memgate's count, not the provider's.
	Estimated bool
}

// Add returns c and o summed (c's Attempt).
func (c Cost) Add(o Cost) Cost {
	return Cost{
		Attempt:   c.Attempt,
		ChatCalls: c.ChatCalls + o.ChatCalls, PromptTokens: c.PromptTokens + o.PromptTokens,
		CompletionTokens: c.CompletionTokens + o.CompletionTokens, EmbeddingCalls: c.EmbeddingCalls + o.EmbeddingCalls,
		EmbeddingInputs: c.EmbeddingInputs + o.EmbeddingInputs, EmbeddingTokens: c.EmbeddingTokens + o.EmbeddingTokens,
		Seconds: c.Seconds + o.Seconds, Estimated: c.Estimated || o.Estimated,
	}
}

// UsageQuery asks what the memories of an agent's own spaces cost: those created at
// or after Since and before Until (either nil for no bound).
type UsageQuery struct {
	AgentID      string
	Since, Until *time.Time
}

// Validate checks the window: Since before Until when both are given.
func (q UsageQuery) Validate() error {
	if err := CheckID("id", q.AgentID); err != nil {
		return err
	}
	if q.Since != nil && q.Until != nil && !q.Since.Before(*q.Until) {
		return Errorf(EINVALID, "since must be before until")
	}
	return nil
}

// Usage is the sum of the costs of the memories a UsageQuery names, and how many
// memories there were. A memory deleted, erased or expired is not counted: its cost
// leaves with it (the process's metrics keep every call).
type Usage struct {
	Memories int
	Cost     Cost
}
