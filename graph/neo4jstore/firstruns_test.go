package neo4jstore

import (
	"context"
	"testing"
	"time"
)

// TestFirstRuns: the first run of a query that keeps its plan goes alone; the runs
// arriving meanwhile wait until it answers, then go together; a first run that fails
// hands the turn to one of them; a query that does not keep its plan never waits; a
// waiting run ends with its context.
func TestFirstRuns(t *testing.T) {
	const kept, other = replanSkip + " MATCH (n) RETURN n", "MATCH (n) RETURN n"
	var f firstRuns
	ctx := context.Background()
	if first, err := f.begin(ctx, "plain", other); first || err != nil {
		t.Fatalf("a query that plans anew: first %v, err %v; want neither", first, err)
	}
	first, err := f.begin(ctx, "q", kept)
	if !first || err != nil {
		t.Fatalf("the first run: first %v, err %v", first, err)
	}
	// Three runs arrive while the first is under way: none goes.
	type turn struct {
		first bool
		err   error
	}
	arrived := make(chan turn, 3)
	for range 3 {
		go func() {
			first, err := f.begin(ctx, "q", kept)
			arrived <- turn{first, err}
		}()
	}
	select {
	case got := <-arrived:
		t.Fatalf("a run went before the first answered: %+v", got)
	case <-time.After(100 * time.Millisecond): // nothing may arrive: no state to poll
	}
	// The first fails: exactly one of the three goes first, and the others wait for it.
	f.end("q", false)
	got := <-arrived
	if !got.first || got.err != nil {
		t.Fatalf("after a failed first run, the next: %+v, want it first", got)
	}
	select {
	case got := <-arrived:
		t.Fatalf("a run went beside the new first run: %+v", got)
	case <-time.After(100 * time.Millisecond):
	}
	f.end("q", true)
	for range 2 {
		if got := <-arrived; got.first || got.err != nil {
			t.Fatalf("after the first run answered: %+v, want to go, not first", got)
		}
	}
	if first, err := f.begin(ctx, "q", kept); first || err != nil {
		t.Fatalf("a later run: first %v, err %v; want it to go at once", first, err)
	}
	// Another query's first run is under way; a run of it waiting ends with its context.
	if first, _ := f.begin(ctx, "r", kept); !first {
		t.Fatal("the first run of another query is not first")
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := f.begin(short, "r", kept); err == nil {
		t.Fatal("a waiting run outlived its context")
	}
}
