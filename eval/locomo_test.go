package main

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/service"
)

// TestLocomo_ReadsAndScores: a sample conversation in LoCoMo's format is read as the
// harness reads the dataset (turns at their session's time, a photo's caption with its
// turn, evidence split and checked, adversarial questions and the authors' own fields
// left out), and a known block is scored as it should be: evidence recall at each
// cut-off, evidence in block, answer words without stop words, and the baselines'
// packing within the budget.
func TestLocomo_ReadsAndScores(t *testing.T) {
	raw, err := os.ReadFile("testdata/locomo-sample.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseLocomo("sample", raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Turns) != 5 || len(c.QA) != 4 {
		t.Fatalf("%d turns, %d questions; want 5 and 4 (the adversarial one left out)", len(c.Turns), len(c.QA))
	}
	if want := time.Date(2024, 3, 3, 9, 15, 2, 0, time.UTC); !c.Turns[2].At.Equal(want) {
		t.Errorf("the third turn is at %v, want %v (its session's time, a second a turn)", c.Turns[2].At, want)
	}
	if !strings.Contains(c.Turns[2].Text, "[shares a photo: a photo of a grey dog on a sofa]") {
		t.Errorf("the photo's caption is not with its turn: %q", c.Turns[2].Text)
	}
	for _, tr := range c.Turns {
		if strings.Contains(tr.Text, "never be read") {
			t.Errorf("the authors' own fields were read: %q", tr.Text)
		}
	}
	if got := strings.Join(c.QA[1].Evidence, ","); got != "D1:3,D2:2" {
		t.Errorf("evidence %q, want D1:3,D2:2 (one string split)", got)
	}
	if got := strings.Join(c.QA[2].Evidence, ","); got != "D2:1" {
		t.Errorf("evidence %q, want D2:1 (a turn that does not exist left out)", got)
	}

	// A known block and ranking for each question.
	tally := newTally("known", true)
	block := "Relevant memories:\n- 3 March 2024: Rowan: Her name is Pepper.\n- 17 March 2024: Imani: I signed up for a pottery class in Leeds."
	ranked := []string{"D2:2", "D1:1", "D1:2", "D1:3", "D2:1", "x", "x", "x", "x", "x", "D9:1"}
	for _, q := range c.QA {
		tally.add(q, ranked, []string{"D1:3", "D2:1"}, block, 30)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	// Per category: temporal's evidence D1:1 at rank 2; single-hop's D1:3 at rank 4 and
	// D2:2 at rank 1; multi-hop's D2:1 at rank 5; open-domain's D2:2 at rank 1.
	for cat, want := range map[int]struct{ r5, inBlock, words float64 }{
		2: {1, 0, 2.0 / 3}, // "2 March 2024": march and 2024 in the block, 2 not
		4: {1, 0.5, 1},     // Pepper
		1: {1, 1, 1},       // Leeds
		3: {1, 0, 0},       // walks, along, canal: none (along is no stop word, and absent)
	} {
		s := tally.byCat[cat]
		if s.n != 1 || !near(s.recall[0], want.r5) || !near(s.inBlock, want.inBlock) || !near(s.answerWords, want.words) {
			t.Errorf("category %d: n %d, recall@5 %.2f, in block %.2f, answer words %.2f; want 1, %.2f, %.2f, %.2f",
				cat, s.n, s.recall[0], s.inBlock, s.answerWords, want.r5, want.inBlock, want.words)
		}
	}
	if got := answerWordsIn("the canal", "We walked along the CANAL."); got != 1 {
		t.Errorf("answer words of the canal: %.2f, want 1 (stop words out, case folded)", got)
	}

	// The baselines: BM25 ranks the dog's name first for its question, and a packed
	// block never passes its budget.
	order := newBM25(c.Turns).rank("What is the name of Rowan's dog?")
	if len(order) == 0 || c.Turns[order[0]].DiaID != "D1:3" {
		t.Errorf("BM25 ranks %v first for the dog's name, want D1:3", dias(c.Turns, order))
	}
	tok, err := service.NewTokenizer(service.DefaultTokenizer)
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{10, 30, 1000} {
		ids, text, tokens := pack(c.Turns, []int{0, 1, 2, 3, 4}, tok, budget)
		if tokens > budget || tok.Count(text) != tokens {
			t.Errorf("budget %d: a packed block of %d tokens", budget, tokens)
		}
		if budget == 1000 && len(ids) != 5 {
			t.Errorf("budget 1000 holds %d turns, want all 5", len(ids))
		}
	}
	if ids, _, _ := recent(c.Turns, tok, 1000); len(ids) != 5 {
		t.Errorf("the last turns within 1000 tokens: %d, want all 5", len(ids))
	}
}
