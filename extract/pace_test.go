package extract

import (
	"testing"
	"time"
)

// TestCallDeadline: a call has llm.timeout until it has read paceTokens tokens; then
// the rest of its budget at the pace read, twice over, and never less than llm.timeout.
func TestCallDeadline(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first := start.Add(10 * time.Second) // the prompt read
	floor := time.Minute
	for _, c := range []struct {
		name         string
		now          time.Time
		read, budget int
		want         time.Time
	}{
		{"no token yet", start, 0, 2048, start.Add(floor)},
		{"too few to pace", first.Add(time.Second), paceTokens - 1, 2048, start.Add(floor)},
		// 8 tokens in 1 s: 2,040 left at 125 ms, twice over: 510 s from now.
		{"a slow server", first.Add(time.Second), 8, 2048, first.Add(time.Second + 510*time.Second)},
		// 100 tokens in 1 s: 1,948 left at 10 ms, twice: 38.96 s, before the floor.
		{"a fast server", first.Add(time.Second), 100, 2048, start.Add(floor)},
		{"the budget read", first.Add(300 * time.Second), 2048, 2048, first.Add(300 * time.Second)},
		{"past the budget", first.Add(400 * time.Second), 3000, 2048, first.Add(400 * time.Second)},
		{"the first token now", first, 8, 2048, start.Add(floor)},
	} {
		if got := callDeadline(start, first, c.now, c.read, c.budget, floor); !got.Equal(c.want) {
			t.Errorf("%s: deadline %s after start, want %s", c.name, got.Sub(start), c.want.Sub(start))
		}
	}
}
