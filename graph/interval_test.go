package graph_test

import (
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
)

func day(s string) *time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return &t
}

// TestFact_End: an end never comes before a start. An assumed start after the end
// becomes unknown; a stated one is kept as overruled; an end after the start leaves
// the start alone; a second end does not move the first.
func TestFact_End(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name                string
		start               *time.Time
		assumed             bool
		end                 *time.Time
		wantStart, overrule *time.Time
	}{
		{"after an assumed start", day("2024-01-01"), true, day("2024-03-01"), day("2024-01-01"), nil},
		{"before an assumed start", day("2026-11-26"), true, day("2024-03-01"), nil, nil},
		{"before a stated start", day("2025-06-01"), false, day("2024-03-01"), nil, day("2025-06-01")},
		{"with no start", nil, false, day("2024-03-01"), nil, nil},
	} {
		f := &graph.Fact{ValidAt: c.start, StartAssumed: c.assumed}
		f.End(*c.end, now)
		if !same(f.ValidAt, c.wantStart) || !same(f.OverruledStart, c.overrule) || !same(f.InvalidAt, c.end) || f.ExpiredAt == nil {
			t.Errorf("%s: start %v (overruled %v), end %v, expired %v", c.name, f.ValidAt, f.OverruledStart, f.InvalidAt, f.ExpiredAt)
		}
		if f.ValidAt != nil && f.InvalidAt.Before(*f.ValidAt) {
			t.Errorf("%s: inverted", c.name)
		}
		f.End(*day("2020-01-01"), now)
		if !same(f.InvalidAt, c.end) {
			t.Errorf("%s: a second end moved the first to %v", c.name, f.InvalidAt)
		}
	}
}

// TestFact_Start: a stated start replaces an assumed one but never lands after the
// fact's end. (What as_of shows of an unknown start is the search's Cypher,
// TestQuickstart_AsOf.)
func TestFact_Start(t *testing.T) {
	f := &graph.Fact{ValidAt: day("2026-11-26"), StartAssumed: true}
	f.Start(*day("2022-01-01"))
	if !same(f.ValidAt, day("2022-01-01")) || f.StartAssumed {
		t.Errorf("a stated start did not replace the assumed one: %v assumed %v", f.ValidAt, f.StartAssumed)
	}
	g := &graph.Fact{}
	g.End(*day("2024-03-01"), time.Now())
	g.Start(*day("2025-01-01"))
	if g.ValidAt != nil {
		t.Errorf("a start after the end was taken: %v", g.ValidAt)
	}
}

func same(a, b *time.Time) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && a.Equal(*b))
}

// Dates in words at the precision a statement gives.
func TestDateInWords(t *testing.T) {
	for in, want := range map[string]string{
		"2024-01-01T00:00:00Z": "2024", "2024-03-01T00:00:00Z": "March 2024", "2024-03-02T00:00:00Z": "2 March 2024",
		"2026-11-26T02:18:44Z": "26 November 2026", "2024-03-01T01:00:00+01:00": "March 2024",
	} {
		at, _ := time.Parse(time.RFC3339, in)
		if got := graph.DateInWords(at); got != want {
			t.Errorf("DateInWords(%s) = %q, want %q", in, got, want)
		}
	}
	if got := (&graph.Fact{ValidAt: day("2024-03-01"), StartAssumed: true}).StatedSince(); got != "" {
		t.Errorf("an assumed start was said: %q", got)
	}
	if got := (&graph.Fact{ValidAt: day("2024-03-01")}).StatedSince(); got != "since March 2024" {
		t.Errorf("a stated start: %q", got)
	}
}
