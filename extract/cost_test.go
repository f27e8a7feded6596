package extract_test

import (
	"context"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
)

// The scripted LLM's usage in the cost tests: every chat answer reports these tokens,
// every embedding call perInput a text.
const (
	promptTokens     = 1000
	completionTokens = 70
	perInput         = 3
)

// reported sums what the scripted LLM reported and was sent: chat calls and their
// tokens (those whose answer carried usage), embedding calls, the texts sent, and the
// tokens of those that answered.
func (p *pipe) reported() graph.Cost {
	var c graph.Cost
	for _, r := range p.llm.Requests() {
		c.ChatCalls++
		if r.Usage {
			c.PromptTokens += int64(r.PromptTokens)
			c.CompletionTokens += int64(r.CompletionTokens)
		}
	}
	for _, r := range p.llm.EmbeddingRequests() {
		c.EmbeddingCalls++
		c.EmbeddingInputs += int64(r.Inputs)
		c.EmbeddingTokens += int64(r.Tokens)
	}
	return c
}

// sameCalls fails t unless got's calls and tokens are want's; Seconds must be more
// than 0 and less than took, the time the test waited in all.
func sameCalls(t *testing.T, what string, got, want graph.Cost, took time.Duration) {
	t.Helper()
	seconds := got.Seconds
	got.Seconds, want.Seconds = 0, 0
	if got != want {
		t.Errorf("%s: cost %+v, want %+v", what, got, want)
	}
	if seconds <= 0 || seconds > took.Seconds() {
		t.Errorf("%s: %.6f seconds, want more than 0 and at most the %v the test took", what, seconds, took)
	}
}

// TestCost_RetriedAttempt: a memory's cost is the sum of its attempts, as the server
// reported them, a failed attempt that used tokens included. Each case fails the first
// attempt after a chat call that used tokens (no call retried within an attempt:
// llm.max_retries 0), then lets the second succeed: its embedding call fails (500) after
// the extraction answered; or the answer runs into max_tokens (cut off, usage reported
// all the same). Then the memory holds two chat calls with both answers' tokens, every
// embedding call with the texts it sent and only the answered one's tokens, attempts 2,
// and the seconds of both; the store's usage sum of its space says the same, and
// nothing for a window before it.
func TestCost_RetriedAttempt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		fail       func(p *pipe)
		embeddings int64 // embedding calls in all
	}{
		{"EmbeddingFails", func(p *pipe) { p.llm.FailEmbeddings(1) }, 2},
		{"CutOff", func(p *pipe) { p.llm.Runaway(1) }, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			p := newPipe(t)
			p.opts.MaxRetries = 0
			p.llm.ReportUsage(promptTokens, completionTokens, perInput)
			text := p.llm.Knows("Ada Quill", "Ben Ostrow")
			c.fail(p)
			ep := p.add(p.space("c"), text)
			p.start(p.runner(1, 3))
			got := p.wait([]*graph.Episode{ep}, time.Minute)[0]
			if got.Status != graph.StatusDone || got.Attempts != 2 {
				t.Fatalf("episode %s after %d attempts (%s), want done after 2", got.Status, got.Attempts, got.LastError)
			}
			emb := p.llm.EmbeddingRequests()
			if int64(len(emb)) != c.embeddings || emb[0].Inputs == 0 {
				t.Fatalf("embedding calls %+v, want %d, each with the episode's names and facts", emb, c.embeddings)
			}
			texts := int64(emb[len(emb)-1].Inputs) // what the succeeding attempt embedded, as the first did
			want := graph.Cost{ChatCalls: 2, PromptTokens: 2 * promptTokens, CompletionTokens: 2 * completionTokens,
				EmbeddingCalls: c.embeddings, EmbeddingInputs: c.embeddings * texts, EmbeddingTokens: perInput * texts}
			sameCalls(t, "the memory", got.Cost, want, time.Since(start))
			sameCalls(t, "the memory, against what the server reported", got.Cost, p.reported(), time.Since(start))

			u, err := p.db.Usage(context.Background(), graph.Visible{GroupIDs: []string{ep.GroupID}}, graph.UsageQuery{})
			if err != nil || u.Memories != 1 || u.Cost != got.Cost {
				t.Errorf("usage of its space: %+v %v, want 1 memory costing %+v", u, err, got.Cost)
			}
			before := ep.CreatedAt
			u, err = p.db.Usage(context.Background(), graph.Visible{GroupIDs: []string{ep.GroupID}}, graph.UsageQuery{Until: &before})
			if err != nil || u != (graph.Usage{}) {
				t.Errorf("usage of its space until it was created: %+v %v, want nothing", u, err)
			}
		})
	}
}

// TestCost_HandedBack: an attempt interrupted by shutdown is handed back without
// counting as an attempt, but what it cost stays: the chat call it had made (no tokens,
// the answer never came) and its time; the next process's attempt adds its own.
func TestCost_HandedBack(t *testing.T) {
	t.Parallel()
	start := time.Now()
	p := newPipe(t)
	p.llm.ReportUsage(promptTokens, completionTokens, perInput)
	p.llm.Latency(2 * time.Second) // the answer does not come before shutdown
	ep := p.add(p.space("h"), p.llm.Knows("Cy Dorn", "Eve Falk"))
	vis := graph.Visible{GroupIDs: []string{ep.GroupID}}
	stop := p.start(p.runner(1, 3))
	// Stopped once the server has read the call (ChatCalls counts it on arrival, before
	// its body is read: a shutdown then may cut the body, and the server records no call).
	for deadline := time.Now().Add(time.Minute); len(p.llm.Requests()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the extraction call was never made")
		}
	}
	stop()
	var back *graph.Episode
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		e, err := p.db.GetEpisode(context.Background(), ep.UUID, vis)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status == graph.StatusQueued && e.Cost.ChatCalls > 0 {
			back = e
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the episode was not handed back with its cost: %s, %+v", e.Status, e.Cost)
		}
	}
	if back.Attempts != 0 {
		t.Errorf("handed back after %d attempts, want the interrupted one not counted", back.Attempts)
	}
	sameCalls(t, "the interrupted attempt", back.Cost, graph.Cost{ChatCalls: 1}, time.Since(start))

	p.llm.Latency(0)
	p.start(p.runner(1, 3))
	got := p.wait([]*graph.Episode{ep}, time.Minute)[0]
	if got.Status != graph.StatusDone || got.Attempts != 1 {
		t.Fatalf("episode %s after %d attempts, want done after 1", got.Status, got.Attempts)
	}
	texts := int64(p.llm.EmbeddingRequests()[0].Inputs)
	sameCalls(t, "both", got.Cost, graph.Cost{ChatCalls: 2, PromptTokens: promptTokens, CompletionTokens: completionTokens,
		EmbeddingCalls: 1, EmbeddingInputs: texts, EmbeddingTokens: perInput * texts}, time.Since(start))
	sameCalls(t, "both, against what the server reported", got.Cost, p.reported(), time.Since(start))
	if got.Cost.Seconds <= back.Cost.Seconds {
		t.Errorf("%.6f seconds after both attempts, %.6f after the first", got.Cost.Seconds, back.Cost.Seconds)
	}
}

// TestCost_Estimated: from a server that reports no usage (llama-cpp-python streams
// none), chat and embedding, streamed or answered whole, a memory's tokens are
// counted with the configured tokenizer (here five tokens a text): every message and
// the answer of each chat call, every text of each embedding call, and the cost says
// they are estimated; the usage sum of its space says the same. From a server that
// reports usage the cost is not estimated (TestCost_RetriedAttempt).
func TestCost_Estimated(t *testing.T) {
	t.Parallel()
	for _, whole := range []bool{false, true} {
		t.Run(map[bool]string{false: "Streamed", true: "Whole"}[whole], func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			p := newPipe(t)
			p.opts.CountTokens = func(s string) int {
				if s == "" {
					return 0
				}
				return 5
			}
			p.llm.ReportNoUsage()
			if whole {
				p.llm.AnswerWhole()
			}
			ep := p.add(p.space("e"), p.llm.Knows("Gus Hale", "Ida Juno"))
			p.start(p.runner(1, 3))
			got := p.wait([]*graph.Episode{ep}, time.Minute)[0]
			if got.Status != graph.StatusDone {
				t.Fatalf("episode %s (%s), want done", got.Status, got.LastError)
			}
			want := graph.Cost{Estimated: true}
			for _, r := range p.llm.Requests() {
				if r.Usage {
					t.Fatalf("the server reported usage: %+v", r)
				}
				want.ChatCalls++
				want.PromptTokens += int64(r.Messages) * (5 + 4) // a message's content, and its role and markers
				want.CompletionTokens += 5
			}
			for _, r := range p.llm.EmbeddingRequests() {
				want.EmbeddingCalls++
				want.EmbeddingInputs += int64(r.Inputs)
				want.EmbeddingTokens += 5 * int64(r.Inputs)
			}
			if want.ChatCalls == 0 || want.EmbeddingCalls == 0 {
				t.Fatalf("%d chat and %d embedding calls; the test needs both", want.ChatCalls, want.EmbeddingCalls)
			}
			sameCalls(t, "the memory", got.Cost, want, time.Since(start))
			u, err := p.db.Usage(context.Background(), graph.Visible{GroupIDs: []string{ep.GroupID}}, graph.UsageQuery{})
			if err != nil || u.Cost != got.Cost {
				t.Errorf("usage of its space: %+v %v, want %+v", u, err, got.Cost)
			}
		})
	}
}
