package neo4jstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// The turns around an episode: the ones just before and after it in its space, by its
// agent, said within the window asked for and passing the creation-time filter; a
// turn of another space or agent, one past the window, one created outside the filter
// or an episode outside the visible set is none.
func TestEpisodeNeighbours(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	space, other := graph.DefaultOrg.Private("nb-"+run), graph.DefaultOrg.Private("nb-other-"+run)
	stranger := "nb-stranger-" + run
	for _, agent := range []string{space.Agent, other.Agent, stranger} {
		if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: agent, OwnerID: "owner-" + run, CreatedAt: time.Now()}, nil); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	write := func(s graph.Space, agent string, after time.Duration) string {
		e := &graph.Episode{UUID: uuid.NewString(), GroupID: s.GroupID(), AgentID: agent, Source: graph.SourceText,
			Content: "a turn", CreatedAt: time.Now().UTC(), ValidAt: at.Add(after), Status: graph.StatusDone, Name: "turn"}
		if res := db.CreateEpisodes(ctx, []*graph.Episode{e})[0]; res.Err != nil {
			t.Fatal(res.Err)
		}
		return e.UUID
	}
	before := write(space, space.Agent, -2*time.Minute)
	write(other, other.Agent, -time.Minute) // another space, nearer
	write(space, stranger, 30*time.Second)  // another agent's, nearer
	hit := write(space, space.Agent, 0)
	later := write(space, space.Agent, 3*time.Hour)
	vis := graph.Visible{GroupIDs: []string{space.GroupID()}}
	ids := func(pair [2]*graph.Episode) [2]string {
		var out [2]string
		for i, e := range pair {
			if e != nil {
				out[i] = e.UUID
			}
		}
		return out
	}
	for _, c := range []struct {
		name   string
		f      graph.SearchFilter
		within time.Duration
		want   [2]string
	}{
		{"ten minutes", graph.SearchFilter{}, 10 * time.Minute, [2]string{before, ""}},
		{"four hours", graph.SearchFilter{}, 4 * time.Hour, [2]string{before, later}},
		{"one minute", graph.SearchFilter{}, time.Minute, [2]string{"", ""}},
		{"created after the test", graph.SearchFilter{CreatedAfter: new(time.Now().Add(time.Hour))}, 4 * time.Hour, [2]string{"", ""}},
	} {
		around, err := db.EpisodeNeighbours(ctx, []string{hit}, vis, c.f, c.within)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(around[hit]); got != c.want {
			t.Errorf("%s: before and after %v, want %v", c.name, got, c.want)
		}
	}
	around, err := db.EpisodeNeighbours(ctx, []string{hit}, graph.Visible{GroupIDs: []string{other.GroupID()}}, graph.SearchFilter{}, 4*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(around) != 0 {
		t.Errorf("an episode outside the visible set has neighbours %v", around)
	}
}
