package neo4jstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestCost_EveryOutcomeAdds: each write of an attempt's outcome adds the attempt's cost
// to the episode's, exactly once, and only the write that holds the lease: a save
// refused for a lost lease (Complete by another worker) still adds its cost, a release
// by a worker without the lease adds nothing; a release to be retried, a hand-back and
// a save each add theirs; one attempt's cost is added once, whichever of its writes
// carries it (a late save of an attempt handed back adds nothing). The usage sum of the
// space is the episode's cost.
func TestCost_EveryOutcomeAdds(t *testing.T) {
	t.Parallel()
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	agent := "cq-" + run
	if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: agent, OwnerID: "cq-owner-" + run, CreatedAt: time.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	space := graph.DefaultOrg.Private(agent).GroupID()
	vis := graph.Visible{GroupIDs: []string{space}}
	ep := &graph.Episode{UUID: uuid.NewString(), GroupID: space, AgentID: agent, Source: graph.SourceText, Content: "Costly.",
		CreatedAt: time.Now().UTC(), ValidAt: time.Now().UTC(), Status: graph.StatusQueued, Name: "Costly."}
	if res := db.CreateEpisodes(ctx, []*graph.Episode{ep})[0]; res.Err != nil {
		t.Fatal(res.Err)
	}
	claim := func(worker string) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			got, _, err := db.Claim(ctx, worker, space, time.Minute, 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 1 && got[0].Episode.UUID == ep.UUID {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the episode was never claimed")
			}
		}
	}
	cost := func(n int64, seconds float64) graph.Cost {
		return graph.Cost{ChatCalls: n, PromptTokens: 100 * n, CompletionTokens: 10 * n, EmbeddingCalls: 2 * n,
			EmbeddingInputs: 5 * n, EmbeddingTokens: 7 * n, Seconds: seconds}
	}
	holds := func(what string, want graph.Cost, status string) {
		t.Helper()
		got, err := db.GetEpisode(ctx, ep.UUID, vis)
		if err != nil {
			t.Fatal(err)
		}
		if got.Cost != want || got.Status != status {
			t.Errorf("after %s: %s costing %+v, want %s costing %+v", what, got.Status, got.Cost, status, want)
		}
	}
	write := func(c graph.Cost) *graph.GraphWrite {
		return &graph.GraphWrite{Episode: ep, Cost: c}
	}

	claim("a")
	results, err := db.Complete(ctx, "b", []*graph.GraphWrite{write(cost(1, 0.5))})
	if err != nil || graph.ErrorCode(results[0]) != graph.ECONFLICT {
		t.Fatalf("a save by a worker without the lease: %v %v, want ECONFLICT", results, err)
	}
	holds("a refused save", cost(1, 0.5), graph.StatusProcessing)
	if err := db.Release(ctx, ep.UUID, "b", "lost", nil, cost(50, 9)); graph.ErrorCode(err) != graph.ECONFLICT {
		t.Fatalf("a release by a worker without the lease: %v, want ECONFLICT", err)
	}
	holds("a refused release", cost(1, 0.5), graph.StatusProcessing)
	now := time.Now()
	if err := db.Release(ctx, ep.UUID, "a", "llm_server: x", &now, cost(2, 0.25)); err != nil {
		t.Fatal(err)
	}
	holds("a release to be retried", cost(3, 0.75), graph.StatusQueued)
	claim("a")
	handed := cost(4, 0.125)
	handed.Attempt = "a#2"
	if err := db.Return(ctx, ep.UUID, "a", handed); err != nil {
		t.Fatal(err)
	}
	holds("a hand-back", cost(7, 0.875), graph.StatusQueued)
	// The same attempt's save, committing after the hand-back (it met shutdown after
	// its group had started): refused, and its cost is not added again.
	results, err = db.Complete(ctx, "a", []*graph.GraphWrite{write(handed)})
	if err != nil || graph.ErrorCode(results[0]) != graph.ECONFLICT {
		t.Fatalf("the handed-back attempt's save: %v %v, want ECONFLICT", results, err)
	}
	holds("the handed-back attempt's late save", cost(7, 0.875), graph.StatusQueued)
	claim("a")
	results, err = db.Complete(ctx, "a", []*graph.GraphWrite{write(cost(8, 1))})
	if err != nil || results[0] != nil {
		t.Fatalf("the save: %v %v", results, err)
	}
	holds("the save", cost(15, 1.875), graph.StatusDone)

	u, err := db.Usage(ctx, vis, graph.UsageQuery{})
	if err != nil || u != (graph.Usage{Memories: 1, Cost: cost(15, 1.875)}) {
		t.Errorf("usage of the space: %+v %v, want the one memory's cost", u, err)
	}
}
