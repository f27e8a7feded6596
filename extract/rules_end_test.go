package extract_test

import (
	"testing"
	"time"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
)

// TestRules_EndAnAssumedStart (issue 31, point 1, the rules path): the model misses
// that Priya left, or ends the job at the reference time it was shown; the rules find
// "at the end of May" and end the job there. When her first memory (which gave no
// start) came before May, its assumed start stays; when after, the start becomes
// unknown: the fact never ends before it begins.
func TestRules_EndAnAssumedStart(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	priya := map[string]any{"name": "Priya Natarajan", "type": "Person", "summary": ""}
	halvorsen := map[string]any{"name": "Halvorsen Logistics", "type": "Organization", "summary": ""}
	works, left := "I work at Halvorsen Logistics.", "I left Halvorsen Logistics at the end of May."
	p.llm.Answer(works, map[string]any{"entities": []any{priya, halvorsen}, "facts": []any{map[string]any{
		"source": "Priya Natarajan", "target": "Halvorsen Logistics", "relation": "WORKS_AT",
		"fact": "Priya works at Halvorsen Logistics.", "valid_at": nil, "invalid_at": nil}}})
	p.llm.Answer(left, map[string]any{"entities": []any{priya, halvorsen}, "facts": []any{}})
	// The same news, which the model ends at the reference time it was shown.
	leftToo := "I left Halvorsen Logistics at the end of May, sadly."
	p.llm.Answer(leftToo, map[string]any{"entities": []any{priya, halvorsen}, "facts": []any{map[string]any{
		"source": "Priya Natarajan", "target": "Halvorsen Logistics", "relation": "WORKS_AT",
		"fact": "Priya left Halvorsen Logistics.", "valid_at": nil, "invalid_at": "2025-08-01T00:00:00Z"}}})
	for _, c := range []struct {
		name          string
		first, second string // reference times
		news          string
		start         string // the start the fact keeps; "" unknown
	}{
		{"assumed start before the end", "2025-01-14", "2025-06-16", left, "2025-01-14"},
		{"assumed start after the end", "2025-07-01", "2025-08-01", left, ""},
		{"the model's end at the reference time", "2025-07-02", "2025-08-01", leftToo, ""},
	} {
		group := p.space(c.first)
		eps := []*graph.Episode{
			p.addAt(group, "Priya Natarajan (user): "+works+"\n", *date(c.first)),
			p.addAt(group, "Priya Natarajan (user): "+c.news+"\n", *date(c.second)),
		}
		r := p.runner(1, 1)
		r.Extractor = extract.WithRules{Model: r.Extractor}
		stop := p.start(r)
		for _, e := range p.wait(eps, 30*time.Second) {
			if e.Status != graph.StatusDone {
				t.Fatalf("%s: %s %s", c.name, e.Status, e.LastError)
			}
		}
		stop()
		ents, facts := p.graphOf(group, "Priya Natarajan", "Halvorsen Logistics")
		var job *graph.Fact
		for _, f := range facts {
			if f.Name == "WORKS_AT" && ents["Halvorsen Logistics"] != nil && f.TargetUUID == ents["Halvorsen Logistics"].UUID {
				job = f
			}
		}
		if job == nil {
			t.Fatalf("%s: no WORKS_AT Halvorsen Logistics among %d facts", c.name, len(facts))
		}
		start := ""
		if job.ValidAt != nil {
			start = job.ValidAt.Format(time.DateOnly)
		}
		if start != c.start || job.InvalidAt == nil || job.InvalidAt.Format(time.DateOnly) != "2025-05-31" {
			t.Errorf("%s: the job holds from %q to %v, want from %q to 2025-05-31", c.name, start, job.InvalidAt, c.start)
		}
		if c.start != "" && !job.StartAssumed {
			t.Errorf("%s: the kept start is no longer marked assumed", c.name)
		}
	}
}
