package neo4jstore_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// Both plans of the neighbourhood read resolution does, on the same spaces: the
// entities sharing a name or a word of one, whatever the case and punctuation, the
// facts touching them, and nothing of another space, however alike its names.
func TestNeighbourhoods_BothPlans(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	mine, theirs := graph.DefaultOrg.Private("nb-a-"+run), graph.DefaultOrg.Private("nb-b-"+run)
	now := time.Now().UTC()
	entity := func(space graph.Space, name string) *graph.EntityNode {
		return &graph.EntityNode{UUID: uuid.NewString(), Name: name, GroupID: space.GroupID(), Type: "Person",
			Summary: "knows Alice well", CreatedAt: now}
	}
	alice, acme, bob := entity(mine, "Alice Smith"), entity(mine, "ACME Corp."), entity(mine, "Bob")
	works := &graph.Fact{UUID: uuid.NewString(), Name: "WORKS_AT", Fact: "Alice works at Acme.", SourceUUID: alice.UUID,
		TargetUUID: acme.UUID, GroupID: mine.GroupID(), Episodes: []string{uuid.NewString()}, CreatedAt: now}
	knows := &graph.Fact{UUID: uuid.NewString(), Name: "KNOWS", Fact: "Bob knows a carpenter.", SourceUUID: bob.UUID,
		TargetUUID: bob.UUID, GroupID: mine.GroupID(), Episodes: []string{uuid.NewString()}, CreatedAt: now}
	if err := db.SaveGraph(ctx, []*graph.EntityNode{alice, acme, bob}, []*graph.Fact{works, knows}); err != nil {
		t.Fatal(err)
	}
	var namesakes []*graph.EntityNode
	for i := range 20 {
		namesakes = append(namesakes, entity(theirs, fmt.Sprintf("Alice Smith%d", i)), entity(theirs, "Alice Smith"), entity(theirs, "acme corp"))
	}
	if err := db.SaveGraph(ctx, namesakes, nil); err != nil {
		t.Fatal(err)
	}

	for _, plan := range []struct {
		name     string
		exactMax int
	}{{"index", 0}, {"exact", 1000}} {
		t.Run(plan.name, func(t *testing.T) {
			near, err := db.NeighbourhoodsPlan(ctx, []graph.NeighbourhoodQuery{
				{GroupID: mine.GroupID(), Names: []string{"alice", "Acme"}},
				{GroupID: mine.GroupID(), Names: []string{"Carol"}},
			}, 100, plan.exactMax)
			if err != nil {
				t.Fatal(err)
			}
			var names, facts []string
			for _, e := range near[0].Entities {
				if e.GroupID != mine.GroupID() {
					t.Errorf("entity %s of %s read for %s", e.Name, e.GroupID, mine.GroupID())
				}
				names = append(names, e.Name)
			}
			for _, f := range near[0].Facts {
				facts = append(facts, f.Name)
			}
			sort.Strings(names)
			if fmt.Sprint(names) != "[ACME Corp. Alice Smith]" || fmt.Sprint(facts) != "[WORKS_AT]" {
				t.Errorf("alice, Acme: entities %v, facts %v; want [ACME Corp. Alice Smith] (not Bob, whose summary names Alice) and [WORKS_AT]", names, facts)
			}
			if len(near[1].Entities) != 0 || len(near[1].Facts) != 0 {
				t.Errorf("Carol: %d entities, %d facts; want none", len(near[1].Entities), len(near[1].Facts))
			}
		})
	}
}
