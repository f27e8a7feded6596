package neo4jstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// Writes that arrive together share transactions (group commit), and each one's
// answer is its own: every acknowledged episode is stored once, a write to an agent
// that does not exist is refused without failing the others, and of two writes with
// the same idempotency key at the same moment exactly one is stored while the rest of
// their group still is.
func TestGroupCommit(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	var agents []string
	for i := range 4 {
		agents = append(agents, fmt.Sprintf("commit-%s-%d", run, i))
		if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: agents[i], OwnerID: "owner-" + run, CreatedAt: time.Now()}, nil); err != nil {
			t.Fatal(err)
		}
	}
	ghost := "commit-ghost-" + run // never created
	episode := func(agent, key string) *graph.Episode {
		now := time.Now().UTC()
		space := graph.DefaultOrg.Private(agent)
		return &graph.Episode{UUID: uuid.NewString(), GroupID: space.GroupID(), AgentID: agent, Source: graph.SourceText,
			Content: "group commit " + run, CreatedAt: now, ValidAt: now, Status: graph.StatusQueued, Name: "commit",
			IdempotencyKey: key, RequestHash: "h-" + key, Version: 1}
	}
	transactions := func() int64 {
		var n int64
		db.QueryStats(func(name string, s *neo4jstore.QueryStat) {
			if name == "episode_create" {
				n = s.Count.Load()
			}
		})
		return n
	}
	write := func(eps []*graph.Episode) []graph.CreateResult {
		res := make([]graph.CreateResult, len(eps))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, e := range eps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res[i] = db.CreateEpisodes(ctx, []*graph.Episode{e})[0]
			}()
		}
		close(start)
		wg.Wait()
		return res
	}
	stored := func(e *graph.Episode) bool {
		_, err := db.GetEpisode(ctx, e.UUID, graph.Visible{GroupIDs: []string{e.GroupID}})
		return err == nil
	}

	t.Run("together", func(t *testing.T) {
		var eps []*graph.Episode
		for i := range 60 {
			agent := agents[i%len(agents)]
			if i%10 == 9 {
				agent = ghost
			}
			eps = append(eps, episode(agent, ""))
		}
		before := transactions()
		res := write(eps)
		n := transactions() - before
		for i, e := range eps {
			switch {
			case e.AgentID == ghost && graph.ErrorCode(res[i].Err) != graph.ENOTFOUND:
				t.Errorf("write %d to an agent that does not exist: %v, want not found", i, res[i].Err)
			case e.AgentID == ghost && stored(e):
				t.Errorf("write %d to an agent that does not exist was stored", i)
			case e.AgentID != ghost && (res[i].Err != nil || !stored(e)):
				t.Errorf("write %d: %v, stored %v", i, res[i].Err, stored(e))
			}
		}
		if n >= int64(len(eps)) {
			t.Errorf("%d writes at once took %d transactions; a group commit takes fewer", len(eps), n)
		}
		t.Logf("%d writes at once in %d transactions", len(eps), n)
	})

	// The key is looked up in the group's own transaction, each episode after those
	// before it in the group: a second write with a key the first of the group took is
	// its replay, or, to another space, another request.
	t.Run("same key in one group", func(t *testing.T) {
		key := "one-group-" + run
		first, again, elsewhere := episode(agents[0], key), episode(agents[0], key), episode(agents[1], key)
		before := transactions()
		res := db.CreateEpisodes(ctx, []*graph.Episode{first, again, elsewhere})
		if n := transactions() - before; n != 1 {
			t.Errorf("three writes in one call took %d transactions, want 1", n)
		}
		if r := res[0]; r.Err != nil || r.Replayed || !stored(first) {
			t.Errorf("the first write: %+v, stored %v; want it stored", r, stored(first))
		}
		if r := res[1]; r.Err != nil || !r.Replayed || r.Episode == nil || r.Episode.UUID != first.UUID || stored(again) {
			t.Errorf("the same request again: %+v, stored %v; want the first one's episode, replayed", r, stored(again))
		}
		if r := res[2]; graph.ErrorCode(r.Err) != graph.EUNPROCESSABLE || stored(elsewhere) {
			t.Errorf("the key to another space: %v, stored %v; want unprocessable", r.Err, stored(elsewhere))
		}
		// And in a later group, as a retry finds it.
		retry := episode(agents[0], key)
		if r := db.CreateEpisodes(ctx, []*graph.Episode{retry})[0]; r.Err != nil || !r.Replayed || r.Episode.UUID != first.UUID {
			t.Errorf("a retry: %+v; want the first one's episode, replayed", r)
		}
		changed := episode(agents[0], key)
		changed.RequestHash = "another body"
		if r := db.CreateEpisodes(ctx, []*graph.Episode{changed})[0]; graph.ErrorCode(r.Err) != graph.EUNPROCESSABLE || stored(changed) {
			t.Errorf("another request with the key: %v, stored %v; want unprocessable", r.Err, stored(changed))
		}
	})

	t.Run("same key", func(t *testing.T) {
		key := "key-" + run
		var eps []*graph.Episode
		for i := range 30 {
			k := ""
			if i < 2 {
				k = key
			}
			eps = append(eps, episode(agents[i%len(agents)], k))
		}
		res := write(eps)
		won := 0
		for i, e := range eps[:2] {
			switch r := res[i]; {
			case r.Err == nil && r.Replayed: // the other committed before this one looked
			case graph.ErrorCode(r.Err) == graph.EUNPROCESSABLE && stored(eps[1-i]):
				// The other, to another agent's space, committed before this one looked (a
				// group of its own, on a busy machine): the key was used for another request.
			case r.Err == nil && stored(e):
				won++
			case r.Err == nil:
				t.Errorf("write %d with the shared key was acknowledged and not stored", i)
			case graph.ErrorCode(r.Err) != graph.ECONFLICT:
				t.Errorf("write %d with the shared key: %v, want conflict (in flight)", i, r.Err)
			}
		}
		if won != 1 {
			t.Errorf("%d of the two writes with one key stored, want 1", won)
		}
		for i, e := range eps[2:] {
			if res[i+2].Err != nil || !stored(e) {
				t.Errorf("write %d beside them: %v, stored %v", i+2, res[i+2].Err, stored(e))
			}
		}
	})
}
