package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func at(s string) *time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return &t
}

// TestHoldsAt: a fact holds from its start, inclusive, to its end, exclusive; an
// unknown start or end does not bound it.
func TestHoldsAt(t *testing.T) {
	for _, c := range []struct {
		name       string
		start, end *time.Time
		at         string
		want       bool
	}{
		{"unknown start, before the end", nil, at("2024-03-01"), "2020-01-01", true},
		{"unknown start and end", nil, nil, "2020-01-01", true},
		{"stated start, inside", at("2024-03-01"), nil, "2024-06-15", true},
		{"at the start", at("2024-03-01"), at("2025-01-01"), "2024-03-01", true},
		{"before the start", at("2024-03-01"), nil, "2024-02-15", false},
		{"at the end", at("2024-03-01"), at("2025-01-01"), "2025-01-01", false},
		{"after the end", nil, at("2024-03-01"), "2024-04-15", false},
	} {
		if got := holdsAt(c.start, c.end, *at(c.at)); got != c.want {
			t.Errorf("%s: holds at %s: %v, want %v", c.name, c.at, got, c.want)
		}
	}
}

// TestHoldsAt_SameAsSearch: holdsAt is the rule search's as_of runs; when the query's
// rule changes, this fails until holdsAt follows it.
func TestHoldsAt_SameAsSearch(t *testing.T) {
	raw, err := os.ReadFile("../cypher/_fact_filter.cypher")
	if err != nil {
		t.Fatal(err)
	}
	const rule = "(r.valid_at IS NULL OR r.valid_at <= $at) AND (r.invalid_at IS NULL OR r.invalid_at > $at)"
	if !strings.Contains(strings.Join(strings.Fields(string(raw)), " "), rule) {
		t.Errorf("cypher/_fact_filter.cypher no longer decides as_of by %q: make holdsAt say what it does", rule)
	}
}

// TestAsOfRight: a question is right when the stored fact holds on its day as it
// says; a fact not stored answers every question wrong, even one that it does not hold.
func TestAsOfRight(t *testing.T) {
	facts := []expectedFact{
		{Source: "Alice", Relation: "WORKS_AT", Target: "Acme", Ends: true, ValidTo: "2024-03"},
		{Source: "Alice", Relation: "WORKS_AT", Target: "Globex", ValidFrom: "2024-03"},
	}
	stored := []outcome{{found: true, invalidAt: at("2024-03-01")}, {}}
	ask := func(f expectedFact, day string, holds bool) asOfQuestion {
		return asOfQuestion{Source: f.Source, Relation: f.Relation, Target: f.Target, At: asDay(day), Holds: holds}
	}
	for _, c := range []struct {
		q    asOfQuestion
		want int
	}{
		{ask(facts[0], "2024-01-01", true), 1},
		{ask(facts[0], "2025-01-01", false), 1},
		{ask(facts[0], "2025-01-01", true), 0},
		{ask(facts[1], "2025-01-01", true), 0},
		{ask(facts[1], "2024-01-01", false), 0},
		{asOfQuestion{Source: "Alice", Relation: "LIVES_IN", Target: "Acme", At: asDay("2024-01-01"), Holds: true}, 0},
	} {
		if got := asOfRight([]asOfQuestion{c.q}, facts, stored); got != c.want {
			t.Errorf("%s %s %s on %s, holds %v: %d right, want %d", c.q.Source, c.q.Relation, c.q.Target,
				c.q.At.Format(time.DateOnly), c.q.Holds, got, c.want)
		}
	}
}

func asDay(s string) day { return day{*at(s)} }

// period is the first instant of a labelled date (a year, 2024, or a month, 2024-03)
// and the first instant after it.
func period(tb testing.TB, label string) (time.Time, time.Time) {
	tb.Helper()
	if t, err := time.Parse("2006-01", label); err == nil {
		return t, t.AddDate(0, 1, 0)
	}
	t, err := time.Parse("2006", label)
	if err != nil {
		tb.Fatalf("%q is neither a year nor a month", label)
	}
	return t, t.AddDate(1, 0, 0)
}

// TestCorpus_AsOf checks the corpus's as_of questions against its labels: each names
// a labelled fact of its conversation; one that holds lies after the labelled start's
// year or month and before the end's; one that does not lies before the start's or
// after the end's. Every dated fact is asked inside its interval, before a stated
// start and after a known end; and the first twelve conversations (what make eval
// gives a slow model) hold at least ten with an undated fact whose end is dated, the
// quickstart's shape.
func TestCorpus_AsOf(t *testing.T) {
	c := readCorpus("corpus.json")
	quickstart := 0
	for n, conv := range c.Conversations {
		asked := map[expectedFact]map[string]bool{} // the kinds of question each fact has
		for _, q := range conv.AsOf {
			name := conv.ID + ": " + q.Source + " " + q.Relation + " " + q.Target + " on " + q.At.Format(time.DateOnly)
			var want *expectedFact
			for i := range conv.Facts {
				if q.about(conv.Facts[i]) {
					want = &conv.Facts[i]
				}
			}
			if want == nil {
				t.Errorf("%s: no such labelled fact", name)
				continue
			}
			kinds := asked[*want]
			if kinds == nil {
				kinds = map[string]bool{}
				asked[*want] = kinds
			}
			afterStart, beforeStart, beforeEnd, afterEnd := true, false, true, false
			if want.ValidFrom != "" {
				from, next := period(t, want.ValidFrom)
				afterStart, beforeStart = !q.At.Before(next), q.At.Before(from)
			}
			if want.ValidTo != "" {
				to, next := period(t, want.ValidTo)
				beforeEnd, afterEnd = q.At.Before(to), !q.At.Before(next)
			}
			switch {
			case q.Holds && afterStart && beforeEnd:
				kinds["inside"] = true
			case !q.Holds && beforeStart:
				kinds["before"] = true
			case !q.Holds && afterEnd:
				kinds["after"] = true
			default:
				t.Errorf("%s, holds %v: the labels (from %q to %q) do not say so", name, q.Holds, want.ValidFrom, want.ValidTo)
			}
		}
		shape := false
		for _, f := range conv.Facts {
			if f.ValidTo != "" && !f.Ends {
				t.Errorf("%s: %s %s %s ends %s but is not labelled ended", conv.ID, f.Source, f.Relation, f.Target, f.ValidTo)
			}
			shape = shape || f.ValidFrom == "" && f.ValidTo != ""
			if f.ValidFrom == "" && f.ValidTo == "" {
				continue
			}
			kinds := asked[f]
			for kind, needed := range map[string]bool{"inside": true, "before": f.ValidFrom != "", "after": f.ValidTo != ""} {
				if needed && !kinds[kind] {
					t.Errorf("%s: %s %s %s (from %q to %q) has no question %s its interval", conv.ID,
						f.Source, f.Relation, f.Target, f.ValidFrom, f.ValidTo, kind)
				}
			}
		}
		if shape && n < 12 {
			quickstart++
		}
	}
	if quickstart < 10 {
		t.Errorf("%d of the first twelve conversations have an undated fact ended at a stated time, want 10", quickstart)
	}
}
