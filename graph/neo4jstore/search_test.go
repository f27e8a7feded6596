package neo4jstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// Both plans of episode search, on the same episodes: the same matches, only from the
// visible set, the better match first.
func TestSearchEpisodes_BothPlans(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	mine, theirs := graph.PrivateSpace("search-a-"+run), graph.PrivateSpace("search-b-"+run)
	write := func(space graph.Space, content string) string {
		now := time.Now().UTC()
		e := &graph.Episode{UUID: uuid.NewString(), GroupID: space.GroupID(), AgentID: space.Agent, Source: graph.SourceText,
			Content: content, CreatedAt: now, ValidAt: now, Status: graph.StatusDone, Name: "search test"}
		if res := db.CreateEpisodes(ctx, []*graph.Episode{e})[0]; res.Err != nil {
			t.Fatal(res.Err)
		}
		return e.UUID
	}
	twice := write(mine, "Coffee with Dana, then more coffee.")
	once := write(mine, "Bought new beans for the office machine, some paper filters and coffee cups too.")
	shouting := write(mine, "COFFEE!")
	write(mine, "The coffeehouse on the corner closed; we met in the garden instead.")
	write(theirs, "coffee coffee coffee, the other agent's coffee")
	vis := graph.Visible{GroupIDs: []string{mine.GroupID()}}

	for _, plan := range []struct {
		name     string
		exactMax int
	}{{"index", 0}, {"exact", 1000}} {
		t.Run(plan.name, func(t *testing.T) {
			hits, err := db.SearchEpisodesPlan(ctx, "coffee", vis, 10, plan.exactMax)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, h := range hits {
				if h.Episode.GroupID != mine.GroupID() {
					t.Errorf("hit %s from %s, outside the visible set", h.Episode.UUID, h.Episode.GroupID)
				}
				got[h.Episode.UUID] = h.Score
			}
			if len(got) != 3 || got[twice] == 0 || got[once] == 0 || got[shouting] == 0 {
				t.Fatalf("hits %v, want the three episodes with the word coffee", got)
			}
			if got[twice] <= got[once] {
				t.Errorf("coffee twice in a short episode scored %.3f, once in a long one %.3f", got[twice], got[once])
			}
			for _, q := range []string{"group_id:*", "*", "coffee OR group_id:" + theirs.GroupID(), "\"coffee\""} {
				hits, err := db.SearchEpisodesPlan(ctx, q, vis, 10, plan.exactMax)
				if err != nil {
					t.Fatalf("%q: %v", q, err)
				}
				for _, h := range hits {
					if h.Episode.GroupID != mine.GroupID() {
						t.Errorf("%q found %s in %s", q, h.Episode.UUID, h.Episode.GroupID)
					}
				}
			}
			if hits, err := db.SearchEpisodesPlan(ctx, "coffee", graph.Visible{GroupIDs: []string{}}, 10, plan.exactMax); err != nil || len(hits) != 0 {
				t.Errorf("empty visible set: %d hits, %v", len(hits), err)
			}
		})
	}
}
