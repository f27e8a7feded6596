package extract_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/extract/llmtest"
)

// history is one generated conversation of n lines, some an assistant's, some
// repeated, some with words outside ASCII.
func history(r *rand.Rand, n int) []string {
	names := []string{"Ana Souza", "Bjørn Dahl", "Chen Wei", "Dana Reyes", "Émile Roux"}
	places := []string{"Lisbon", "Tromsø", "Kraków", "Osaka", "São Paulo", "Zürich"}
	orgs := []string{"Initech", "Globex", "Nordvik Energy", "Halvorsen Logistics", "Umbrella"}
	var out []string
	for i := 0; i < n; i++ {
		who := names[r.IntN(len(names))]
		var line string
		switch r.IntN(5) {
		case 0:
			line = fmt.Sprintf("%s (user): I moved to %s in %d. The flat is small but bright.", who, places[r.IntN(len(places))], 2015+r.IntN(10))
		case 1:
			line = fmt.Sprintf("%s (user): As of March I work at %s; my manager is %s.", who, orgs[r.IntN(len(orgs))], names[r.IntN(len(names))])
		case 2:
			line = "assistant: Noted! Anything else I should remember?"
		case 3:
			line = fmt.Sprintf("%s (user): %s", who, strings.Repeat("A long ramble about nothing in particular, ", 1+r.IntN(40)))
		default:
			if len(out) > 0 {
				line = out[r.IntN(len(out))] // said again
			} else {
				line = who + " (user): Hello."
			}
		}
		out = append(out, line)
	}
	return out
}

// TestSummarize_Budget: on 20 generated histories and budgets from 16 to 4,000 bytes,
// the offline summary and the model's (answering with far more than asked, as a
// model may) are never over the budget in bytes, cut between characters, and hold
// no assistant line; nor are a reflection's summary and rules together. Each model
// call (one per compaction, one per reflection) asks for at most the budget's tokens
// and the JSON around them, whatever llm.max_tokens.
func TestSummarize_Budget(t *testing.T) {
	t.Parallel()
	llm := llmtest.New()
	t.Cleanup(llm.Close)
	long := strings.Repeat("Ana Souza lives in Zürich and works at Globex; ", 400)
	rule := strings.Repeat("Never book seafood: Ana is allergic. ", 30)
	llm.Answer("<memories>", map[string]any{"summary": long, "rules": []string{rule, rule, "Short rule.", rule, rule, rule, rule}})
	model := extract.NewOpenAI(extract.OpenAIOptions{BaseURL: llm.BaseURL(), APIKey: "test", Model: "scripted",
		Timeout: 5 * time.Second, MaxConcurrency: 1, MaxRetries: 1, RetryBase: time.Millisecond, MaxTokens: 4096,
		Metrics: &extract.Metrics{}}, extract.DefaultEntityTypes)
	r := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 20; i++ {
		texts := history(r, 1+r.IntN(60))
		budget := []int{16, 50, 200, 1000, 4000}[i%5]
		for name, s := range map[string]interface {
			Summarize(context.Context, []string, int) (string, error)
			Reflect(context.Context, []string, []string, int) (string, []string, error)
		}{"offline": extract.Extractive{}, "model": model} {
			got, err := s.Summarize(context.Background(), texts, budget)
			switch {
			case err != nil:
				t.Fatalf("history %d, %s: %v", i, name, err)
			case len(got) > budget || !utf8.ValidString(got):
				t.Errorf("history %d, %s: %d bytes for a budget of %d (valid UTF-8: %v)", i, name, len(got), budget, utf8.ValidString(got))
			case got == "" && budget >= 50:
				t.Errorf("history %d, %s: empty summary in %d bytes", i, name, budget)
			case strings.Contains(got, "Anything else"):
				t.Errorf("history %d, %s: an assistant's line in %q", i, name, got)
			}
			summary, rules, err := s.Reflect(context.Background(), texts, []string{"Ana Souza lives in Zürich."}, budget)
			size := len(summary)
			for _, r := range rules {
				size += len(r)
			}
			if err != nil || size > budget || len(rules) > 5 || !utf8.ValidString(summary+strings.Join(rules, "")) {
				t.Errorf("history %d, %s reflection: %d bytes and %d rules for a budget of %d (%v)", i, name, size, len(rules), budget, err)
			}
		}
	}
	for _, req := range llm.Requests() {
		if req.MaxTokens > 4000+128 {
			t.Errorf("a summary call asked for %d tokens", req.MaxTokens)
		}
	}
	if n := len(llm.Requests()); n != 40 {
		t.Errorf("%d calls for 20 compactions and 20 reflections, want one each", n)
	}
}
