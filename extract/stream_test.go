package extract_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph"
)

// model is an extractor of mode against a fresh scripted server that serves that mode
// alone, with llm.max_tokens maxTokens.
func model(t *testing.T, mode string, maxTokens int) (*extract.OpenAI, *llmtest.Server, *extract.Metrics) {
	t.Helper()
	llm := llmtest.New()
	t.Cleanup(llm.Close)
	llm.Accepts(mode)
	m := &extract.Metrics{}
	o := extract.NewOpenAI(extract.OpenAIOptions{BaseURL: llm.BaseURL(), APIKey: "test", Model: "scripted",
		Timeout: 10 * time.Second, MaxConcurrency: 1, MaxRetries: 2, RetryBase: time.Millisecond, StructuredOutput: mode,
		MaxTokens: maxTokens, Metrics: m}, extract.DefaultEntityTypes)
	return o, llm, m
}

func episode(content string) *graph.Episode {
	return &graph.Episode{UUID: "e1", GroupID: "agent-x-private", Content: content, ValidAt: time.Now()}
}

func cutOffs(m *extract.Metrics) int64 {
	if n, ok := m.LLMErrors.Load("cut_off"); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// TestStream_RunawayAfterJSON (issue 31, point 6): in every structured-output mode, an
// answer whose JSON has ended and that goes on (newlines, as a grammar allowing
// whitespace after the object lets a model do; or the object over again) is read no
// further: the client goes away long before max_tokens, the JSON read is the answer,
// in one call, counted once as cut_off, and tokens are still counted.
func TestStream_RunawayAfterJSON(t *testing.T) {
	t.Parallel()
	for _, mode := range extract.OutputModes {
		for name, tail := range map[string]string{"newlines": "\n", "again": `{"entities": [], "facts": []}`} {
			t.Run(mode+"/"+name, func(t *testing.T) {
				t.Parallel()
				o, llm, m := model(t, mode, 2048)
				llm.Answer("Alice works at Acme", aliceAcme)
				llm.RunawayAfterJSON(1, tail)
				x, err := o.Extract(context.Background(), episode("Alice works at Acme as an engineer."), nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(x.Entities) != 2 || x.Entities[0].Name != "Alice" || x.Entities[1].Name != "Acme" || len(x.Facts) != 1 {
					t.Fatalf("extracted %+v, want Alice, Acme and WORKS_AT", x)
				}
				llm.Close() // every answer has ended: the server has seen the client go or finished
				reqs := llm.Requests()
				if len(reqs) != 1 || !reqs[0].Stream || !reqs[0].Disconnected || reqs[0].Chunks > reqs[0].MaxTokens/2 {
					t.Fatalf("requests %+v, want one, streamed, left by the client long before max_tokens", reqs)
				}
				if n := cutOffs(m); n != 1 {
					t.Errorf("cut_off counted %d times, want once", n)
				}
				if m.ChatPromptTokens.Load() <= 0 || m.ChatOutputTokens.Load() <= 0 {
					t.Errorf("tokens counted: %d prompt, %d output; want both, estimated when no usage came",
						m.ChatPromptTokens.Load(), m.ChatOutputTokens.Load())
				}
			})
		}
	}
}

// TestStream_WholeObject: the answer's object ends at its own closing brace, not at
// one inside a string (escaped quotes and backslashes respected), and indentation as
// deep as llama.cpp's grammars allow (two newlines and 20 spaces) is not padding.
func TestStream_WholeObject(t *testing.T) {
	t.Parallel()
	o, llm, _ := model(t, extract.OutputJSONSchema, 2048)
	indent := "\n\n" + strings.Repeat(" ", 20)
	llm.AnswerRaw("Alice works at Acme", `{`+indent+`"entities": [{"name": "A \"} B", "type": "Person",`+indent+
		`"summary": "a } and a \\"}], "facts": []`+indent+`}`)
	llm.RunawayAfterJSON(1, `{"entities": [], "facts": []}`)
	x, err := o.Extract(context.Background(), episode("Alice works at Acme as an engineer."), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Entities) != 1 || x.Entities[0].Name != `A "} B` || x.Entities[0].Summary != `a } and a \` {
		t.Errorf("extracted %+v, want the one entity with its braces and quotes", x.Entities)
	}
	llm.Close()
	if reqs := llm.Requests(); len(reqs) != 1 || !reqs[0].Disconnected {
		t.Errorf("requests %+v, want one, left by the client after the object", reqs)
	}
}

// TestStream_PaddingInside (issue 31, point 6): an answer that breaks off in the middle
// of its JSON into newlines is read no further than a run of them; it is a runaway
// (cut_off), and the retry, shown the answer and what was wrong with it, succeeds.
func TestStream_PaddingInside(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{extract.OutputJSONObject, extract.OutputTools} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			o, llm, m := model(t, mode, 2048)
			llm.Answer("Alice works at Acme", aliceAcme)
			llm.PadInside(1)
			x, err := o.Extract(context.Background(), episode("Alice works at Acme as an engineer."), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(x.Entities) != 2 || len(x.Facts) != 1 {
				t.Fatalf("extracted %+v, want the retry's Alice, Acme and WORKS_AT", x)
			}
			llm.Close()
			reqs := llm.Requests()
			if len(reqs) != 2 || !reqs[0].Disconnected || reqs[0].Chunks > reqs[0].MaxTokens/2 {
				t.Fatalf("requests %+v, want the first left by the client long before max_tokens, then a retry", reqs)
			}
			if reqs[1].Messages != 4 || reqs[1].Disconnected {
				t.Errorf("retry %+v, want the repair (the answer and what was wrong), read to its end", reqs[1])
			}
			if n := cutOffs(m); n != 1 {
				t.Errorf("cut_off counted %d times, want once", n)
			}
			if n, ok := m.LLMErrors.Load("malformed"); ok && n.(*atomic.Int64).Load() != 0 {
				t.Errorf("malformed counted %d times, want the padding counted as cut_off only", n.(*atomic.Int64).Load())
			}
		})
	}
}

// TestStream_EndsInTime: a normal answer is read to its end, with the usage the server
// sends last; nothing is counted as cut off.
func TestStream_EndsInTime(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{extract.OutputJSONSchema, extract.OutputJSONObject, extract.OutputTools} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			o, llm, m := model(t, mode, 2048)
			llm.Answer("Alice works at Acme", aliceAcme)
			if _, err := o.Extract(context.Background(), episode("Alice works at Acme as an engineer."), nil); err != nil {
				t.Fatal(err)
			}
			llm.Close()
			reqs := llm.Requests()
			if len(reqs) != 1 || !reqs[0].Stream || reqs[0].Disconnected || int64(reqs[0].Chunks) != m.ChatOutputTokens.Load() {
				t.Errorf("requests %+v, %d output tokens counted; want one streamed to its end, its usage counted",
					reqs, m.ChatOutputTokens.Load())
			}
			if n := cutOffs(m); n != 0 {
				t.Errorf("cut_off counted %d times for an answer that ended", n)
			}
		})
	}
}

// TestExtract_OutputBudget (issue 31, point 6): the extraction call asks for an output
// budget that grows with the episode's length and is never above llm.max_tokens, enough
// for the densest answer the fixtures script; the other calls keep llm.max_tokens.
func TestExtract_OutputBudget(t *testing.T) {
	t.Parallel()
	const maxTokens = 1500
	o, llm, _ := model(t, extract.OutputJSONSchema, maxTokens)
	sentence := "In March 2024 Alice left Acme and joined Globex. "
	llm.Answer(sentence, aliceGlobex)
	llm.Answer(`"Bob" / "Robert"`, map[string]any{"pair_1": false})
	sizes := []int{1, 2, 4, 8, 16, 64}
	for _, n := range sizes {
		if _, err := o.Extract(context.Background(), episode(strings.Repeat(sentence, n)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := o.SameEntities(context.Background(), []extract.NamePair{{Extracted: "Bob", Existing: "Robert"}}); err != nil {
		t.Fatal(err)
	}
	reqs := llm.Requests()
	if len(reqs) != len(sizes)+1 {
		t.Fatalf("%d requests, want %d extractions and a judgement", len(reqs), len(sizes))
	}
	// aliceGlobex as a model writes it, indented, is under 1,000 bytes: some 250 tokens.
	if first := reqs[0].MaxTokens; first < 250 || first >= maxTokens {
		t.Errorf("one sentence may have %d tokens, want at least 250 and under llm.max_tokens", first)
	}
	for i := 1; i < len(sizes); i++ {
		if prev, cur := reqs[i-1].MaxTokens, reqs[i].MaxTokens; cur > maxTokens || cur < prev || cur == prev && cur != maxTokens {
			t.Errorf("%d sentences may have %d tokens, %d may have %d; want more for more, at most %d",
				sizes[i-1], prev, sizes[i], cur, maxTokens)
		}
	}
	if last := reqs[len(sizes)-1].MaxTokens; last != maxTokens {
		t.Errorf("%d sentences may have %d tokens, want llm.max_tokens %d", sizes[len(sizes)-1], last, maxTokens)
	}
	if judge := reqs[len(sizes)].MaxTokens; judge != maxTokens {
		t.Errorf("the judgement asked for %d tokens, want llm.max_tokens %d", judge, maxTokens)
	}
}

// TestStream_AnsweredWhole: a server that answers a streamed request with one JSON body
// (as some OpenAI-compatible servers do) is read as the stream it stands for, in every
// structured-output mode: the answer extracted in one call, its usage counted.
func TestStream_AnsweredWhole(t *testing.T) {
	t.Parallel()
	for _, mode := range extract.OutputModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			o, llm, m := model(t, mode, 2048)
			llm.Answer("Alice works at Acme", aliceAcme)
			llm.AnswerWhole()
			llm.ReportUsage(120, 30, 1)
			x, err := o.Extract(context.Background(), episode("Alice works at Acme as an engineer."), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(x.Entities) != 2 || x.Entities[0].Name != "Alice" || x.Entities[1].Name != "Acme" || len(x.Facts) != 1 {
				t.Fatalf("extracted %+v, want Alice, Acme and WORKS_AT", x)
			}
			if reqs := llm.Requests(); len(reqs) != 1 || !reqs[0].Stream || reqs[0].Chunks != 0 {
				t.Fatalf("requests %+v, want one, asking for a stream, answered whole", reqs)
			}
			if m.ChatPromptTokens.Load() != 120 || m.ChatOutputTokens.Load() != 30 {
				t.Errorf("tokens counted: %d prompt, %d output; want the server's 120 and 30", m.ChatPromptTokens.Load(), m.ChatOutputTokens.Load())
			}
		})
	}
}

// TestStream_SlowServerFinishes: a server writing its answer slower than llm.timeout
// lasts, token by token, is let finish at the pace it keeps: one call, no timeout.
// A fixed llm.timeout cut it off on every try.
func TestStream_SlowServerFinishes(t *testing.T) {
	t.Parallel()
	o, llm := timed(t, 300*time.Millisecond, 256)
	llm.Answer("Alice works at Acme", aliceAcme)
	llm.Pace(10 * time.Millisecond)
	began := time.Now()
	x, err := o.Extract(context.Background(), episode("Alice works at Acme as an engineer."), nil)
	if err != nil {
		t.Fatalf("%v after %s", err, time.Since(began))
	}
	if len(x.Facts) != 1 {
		t.Fatalf("extracted %+v, want WORKS_AT", x)
	}
	reqs := llm.Requests()
	if len(reqs) != 1 || reqs[0].Chunks*10 < 300 {
		t.Fatalf("%d calls (%+v), want one answer longer than llm.timeout", len(reqs), reqs)
	}
}

// TestStream_StalledServerCutOff: a server that stops writing mid-answer is cut off
// when the pace it kept runs out, as a timeout, long before its budget at that pace
// from the start would allow a silent server.
func TestStream_StalledServerCutOff(t *testing.T) {
	t.Parallel()
	o, llm := timed(t, 200*time.Millisecond, 64)
	llm.Answer("Alice works at Acme", aliceAcme)
	llm.Pace(5 * time.Millisecond)
	llm.StallAfter(20)
	began := time.Now()
	_, err := o.Extract(context.Background(), episode("Alice works at Acme as an engineer."), nil)
	took := time.Since(began)
	var llmErr *extract.LLMError
	if !errors.As(err, &llmErr) || llmErr.Kind != "timeout" {
		t.Fatalf("error %v, want a timeout", err)
	}
	// 20 tokens at 5 ms: 44 left at that pace twice over is under half a second; on a
	// machine so loaded the pace read is ten times slower, four.
	if took > 5*time.Second {
		t.Errorf("cut off after %s, want within seconds of the stall", took)
	}
}

// timed is an extractor with llm.timeout timeout, llm.max_tokens maxTokens and no
// retry, against a fresh scripted server.
func timed(t *testing.T, timeout time.Duration, maxTokens int) (*extract.OpenAI, *llmtest.Server) {
	llm := llmtest.New()
	t.Cleanup(llm.Close)
	return extract.NewOpenAI(extract.OpenAIOptions{BaseURL: llm.BaseURL(), APIKey: "test", Model: "scripted",
		Timeout: timeout, MaxConcurrency: 1, StructuredOutput: extract.OutputJSONSchema, MaxTokens: maxTokens,
		Metrics: &extract.Metrics{}}, extract.DefaultEntityTypes), llm
}
