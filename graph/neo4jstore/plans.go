package neo4jstore

import (
	"context"
	"strings"
	"sync"
)

// replanSkip starts a query whose first plan Neo4j keeps when the statistics change
// (docs/architecture.md, "Plans kept"): a query that plans slowly, with a plan that
// does not depend on the statistics.
const replanSkip = "CYPHER replan=skip"

// firstRuns lets one run of each slow-planning query go first in this process: Neo4j
// plans a query for every run that finds no plan cached, so fifty searches arriving
// before the first plan was made would plan it fifty times over, on the CPU the writes
// need. Until the first run of such a query has answered, the others wait for it;
// once one has, none waits. A first run that fails hands the turn to the next.
type firstRuns struct {
	mu    sync.Mutex
	turns map[string]chan struct{} // query name -> closed once a run of it answered
}

// begin waits, for a query that keeps its plan, until no first run of it is under
// way, and says whether the caller runs first: then it must call end.
func (f *firstRuns) begin(ctx context.Context, name, text string) (first bool, err error) {
	if !strings.HasPrefix(text, replanSkip) {
		return false, nil
	}
	for {
		f.mu.Lock()
		if f.turns == nil {
			f.turns = map[string]chan struct{}{}
		}
		turn, started := f.turns[name]
		if !started {
			f.turns[name] = make(chan struct{})
			f.mu.Unlock()
			return true, nil
		}
		f.mu.Unlock()
		select {
		case <-turn:
			f.mu.Lock()
			answered := f.turns[name] == turn // still there: the first run answered
			f.mu.Unlock()
			if answered {
				return false, nil
			}
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// end ends the first run of name: answered, later runs go ahead; failed, the next run
// goes first.
func (f *firstRuns) end(name string, answered bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	turn := f.turns[name]
	if !answered {
		delete(f.turns, name)
	}
	close(turn)
}
