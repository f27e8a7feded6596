package graph_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
)

// Description made at once from what each episode said, newest first, is what merging
// them one episode at a time, as the pipeline does, makes: repeated words once, the
// newest first, the oldest cut at half the summary limit.
func TestDescription_SameAsMergingOneByOne(t *testing.T) {
	long := strings.Repeat("Writes long letters to old friends. ", 10)
	for _, said := range [][]string{ // oldest first
		nil,
		{""},
		{"An engineer."},
		{"An engineer.", "", "Left Acme."},
		{"An engineer.", "An engineer.", "Left Acme.", "An engineer."},
		{"Left Acme.", "Joined Globex. Left Acme.", "Lives in\nPorto.\x00"},
		{long, "Lives in Porto.", long + "Again."},
	} {
		merged := ""
		newestFirst := make([]string, len(said))
		for i, s := range said {
			merged = graph.MergeDescription(s, merged)
			newestFirst[len(said)-1-i] = s
		}
		if got := graph.Description(newestFirst); got != merged {
			t.Errorf("Description(%q) = %q, want %q", newestFirst, got, merged)
		}
		if n := len([]rune(merged)); n > graph.MaxSummaryRunes/2 {
			t.Errorf("a description of %d runes", n)
		}
	}
}

// EntitySummary: the description, then the entity's current facts, the latest begun
// first, each text once, whatever order they come in; ended, expired and other
// entities' facts left out.
func TestEntitySummary(t *testing.T) {
	day := func(d int) *time.Time { x := time.Date(2024, 3, d, 0, 0, 0, 0, time.UTC); return &x }
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	fact := func(text, src, tgt string, valid, invalid, expired *time.Time) *graph.Fact {
		return &graph.Fact{Fact: text, SourceUUID: src, TargetUUID: tgt, ValidAt: valid, InvalidAt: invalid, ExpiredAt: expired, CreatedAt: created}
	}
	facts := []*graph.Fact{
		fact("Dana lives in Porto.", "dana", "porto", day(1), nil, nil),
		fact("Dana works at Acme.", "dana", "acme", day(2), nil, nil),
		fact("Bo knows Dana.", "bo", "dana", day(2), nil, nil),
		fact("Dana lived in Faro.", "dana", "faro", day(1), day(1), day(2)),
		fact("Dana buys stamps.", "dana", "acme", day(3), nil, day(4)),
		fact("Bo lives in Porto.", "bo", "porto", day(9), nil, nil),
		fact("Dana lives in Porto.", "dana", "porto", day(1), nil, nil),
		fact("Dana is a Person.", "dana", "person", nil, nil, nil), // no start: from when it was learned
	}
	want := "Collects stamps. Dana is a Person. Bo knows Dana (since 2 March 2024). Dana works at Acme (since 2 March 2024). Dana lives in Porto (since March 2024)."
	for i := range facts {
		rotated := append(append([]*graph.Fact{}, facts[i:]...), facts[:i]...)
		if got := graph.EntitySummary("dana", "Collects stamps.", rotated); got != want {
			t.Errorf("facts from %d: %q, want %q", i, got, want)
		}
	}
	if got := graph.EntitySummary("carol", "", facts); got != "" {
		t.Errorf("an entity with no description and no facts: %q", got)
	}
}

// A summary says a fact's stated start in words, never an assumed one, and not twice
// when the fact's text says it already.
func TestEntitySummary_StartsInWords(t *testing.T) {
	at := func(s string) *time.Time { x, _ := time.Parse(time.RFC3339, s); return &x }
	facts := []*graph.Fact{
		{Fact: "Priya works at Northwind.", SourceUUID: "priya", TargetUUID: "northwind", ValidAt: at("2025-06-01T00:00:00Z")},
		{Fact: "Priya lives in Leeds.", SourceUUID: "priya", TargetUUID: "leeds", ValidAt: at("2026-11-26T02:18:44Z"), StartAssumed: true},
		{Fact: "Priya joined the choir in 2019.", SourceUUID: "priya", TargetUUID: "choir", ValidAt: at("2019-01-01T00:00:00Z")},
	}
	want := "Allergic to shellfish. Priya lives in Leeds. Priya works at Northwind (since June 2025). Priya joined the choir in 2019."
	if got := graph.EntitySummary("priya", "Allergic to shellfish.", facts); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// A model's text speaks of dates in words: the reference time it was shown (a
// timestamp) goes with the word that made it a start; a date alone is said in words.
func TestSpokenDates(t *testing.T) {
	for in, want := range map[string]string{
		"Priya's employer since 2026-11-26T02:18:44Z.":           "Priya's employer.",
		"Works at Northwind since 2025-06-01, as a chemist.":     "Works at Northwind since June 2025, as a chemist.",
		"Moved on 2024-03-15 (as of 2026-11-26T02:18:44+00:00).": "Moved on 15 March 2024.",
		"Born 1990-01-01 in Leeds.":                              "Born 1990 in Leeds.",
		"Order 2024-13-45 shipped.":                              "Order 2024-13-45 shipped.",
		"No dates here.":                                         "No dates here.",
	} {
		if got := graph.SpokenDates(in); got != want {
			t.Errorf("SpokenDates(%q) = %q, want %q", in, got, want)
		}
	}
}
