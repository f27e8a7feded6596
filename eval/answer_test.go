package main

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestTokenF1: LoCoMo's measure: normalized tokens, overlap as a multiset, a
// multi-hop answer part by part.
func TestTokenF1(t *testing.T) {
	for _, c := range []struct {
		gold, got string
		multi     bool
		want      float64
	}{
		{"7 May 2023", "7 May, 2023.", false, 1},
		{"Walks along the canal", "a walk along the canal", false, 2.0 / 3}, // walks is not walk: no stemming
		{"Pepper", "Her dog is called Pepper", false, 2 * (1.0 / 5) * 1 / (1.0/5 + 1)},
		{"Pepper", "I don't know", false, 0},
		{"the the", "the", false, 1},                     // nothing but articles on both sides
		{"Paris, Rome", "Rome and Paris", true, 2.0 / 3}, // each part found in the one answered, which is twice as long
		{"Paris, Rome", "Rome, Paris", true, 1},
		{"Paris, Rome", "Paris", true, 0.5},
	} {
		if got := tokenF1(c.gold, c.got, c.multi); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("F1 of %q against %q: %.4f, want %.4f", c.got, c.gold, got, c.want)
		}
	}
}

// TestAnswerSample: as evenly as can be across the categories, a category with too
// few questions leaving its share to the others, and taken through each category.
func TestAnswerSample(t *testing.T) {
	var asked []locomoAsked
	for cat, n := range map[int]int{1: 10, 2: 2, 3: 10, 4: 10} {
		for i := range n {
			asked = append(asked, locomoAsked{q: locomoQA{Category: cat, Question: string(rune('a' + i))}})
		}
	}
	got := map[int][]string{}
	for _, a := range answerSample(asked, 12) {
		got[a.q.Category] = append(got[a.q.Category], a.q.Question)
	}
	for cat, want := range map[int]string{1: "adg", 2: "ab", 3: "adg", 4: "acfh"} {
		if s := strings.Join(got[cat], ""); s != want {
			t.Errorf("category %d: questions %q, want %q", cat, s, want)
		}
	}
}

// TestAnswerAll: answers come from the block each system gave, scored by F1 into that
// system's tally, and a judge's verdicts are counted beside them. The scripted model
// answers from the memory it is given; the judge says correct when the answer holds
// the gold one.
func TestAnswerAll(t *testing.T) {
	var mu sync.Mutex
	var prompts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		user := req.Messages[1].Content
		mu.Lock()
		prompts = append(prompts, user)
		mu.Unlock()
		answer := "I don't know"
		switch {
		case strings.HasPrefix(user, "Question:"): // the judge's
			answer = `{"label": "WRONG"}`
			if strings.Contains(user, "Generated answer: Pepper") {
				answer = `{"label": "CORRECT"}`
			}
		case strings.Contains(user, "Her name is Pepper"):
			answer = "Pepper\nShe is a greyhound."
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": answer}}}})
	}))
	defer srv.Close()

	mem, bm := newTally("memgate", true), newTally("BM25", true)
	q := locomoQA{Question: "What is the name of Rowan's dog?", Answer: "Pepper", Category: 4}
	sample := []locomoAsked{{q: q, blocks: map[*locomoTally]string{mem: "- 3 March 2024: Rowan: Her name is Pepper.", bm: "- 17 March 2024, Imani: I signed up for a pottery class."}}}
	model := newChatModel("scripted", srv.URL+"/v1", "m", "k")
	if err := answerAll(context.Background(), sample, []*locomoTally{mem, bm}, model, model); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tally      *locomoTally
		f1         float64
		judged, ok int
	}{{mem, 1, 1, 1}, {bm, 0, 1, 0}} {
		s := c.tally.byCat[4]
		if s.answered != 1 || math.Abs(s.f1-c.f1) > 1e-9 || s.judged != c.judged || s.correct != c.ok {
			t.Errorf("%s: answered %d, F1 %.2f, judged %d, correct %d; want 1, %.2f, %d, %d", c.tally.name, s.answered, s.f1, s.judged, s.correct, c.f1, c.judged, c.ok)
		}
	}
	// Two answers and a verdict for each system: six calls, each answer asked with the
	// block of its system.
	if len(prompts) != 6 || !strings.Contains(prompts[0], "Her name is Pepper") || !strings.Contains(prompts[3], "pottery class") {
		t.Errorf("the model was asked %d times: %q", len(prompts), prompts)
	}
}
