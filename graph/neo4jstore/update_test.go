package neo4jstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// An update that changes only a memory's attributes leaves the lease of the worker
// extracting it alone, so its result is saved; one that changes the content ends the
// lease, so the result of the old content is refused and the memory is queued again.
func TestUpdateEpisode_WhileProcessing(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	agent := "upd-" + run
	if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: agent, OwnerID: "owner-" + run, CreatedAt: time.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	space := graph.DefaultOrg.Private(agent).GroupID()
	vis := graph.Visible{GroupIDs: []string{space}}
	e := &graph.Episode{UUID: uuid.NewString(), Name: "n", GroupID: space, AgentID: agent, Source: graph.SourceText,
		Content: "Alice works at Acme.", CreatedAt: time.Now().UTC(), ValidAt: time.Now().UTC(), Status: graph.StatusQueued}
	if res := db.CreateEpisodes(ctx, []*graph.Episode{e})[0]; res.Err != nil {
		t.Fatal(res.Err)
	}
	change := func(mutate func(*graph.Episode)) *graph.Episode {
		t.Helper()
		got, err := db.UpdateEpisode(ctx, e.UUID, vis, 20, func(cur *graph.Episode, _ []graph.Version) (*graph.Episode, *graph.AuditEvent, error) {
			next := *cur
			now := time.Now().UTC()
			next.Version, next.UpdatedAt, next.UpdatedBy = cur.Version+1, &now, "owner-"+run
			mutate(&next)
			return &next, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	claim := func() {
		t.Helper()
		claimed, _, err := db.Claim(ctx, "w-"+run, space, time.Minute, 1, 0)
		if err != nil || len(claimed) != 1 || claimed[0].Episode.UUID != e.UUID {
			t.Fatalf("claim: %v, %d claimed", err, len(claimed))
		}
	}
	complete := func() error {
		t.Helper()
		errs, err := db.Complete(ctx, "w-"+run, []*graph.GraphWrite{{Episode: e}})
		if err != nil {
			t.Fatal(err)
		}
		return errs[0]
	}

	claim()
	if got := change(func(n *graph.Episode) { n.Tags = []string{"hr"} }); got.Status != graph.StatusProcessing || got.Version != 2 {
		t.Fatalf("after a tags update during extraction: %s, version %d", got.Status, got.Version)
	}
	if err := complete(); err != nil {
		t.Fatalf("the worker's result after a tags update: %v, want saved", err)
	}

	change(func(n *graph.Episode) { n.Content, n.Status = "Alice works at Globex.", graph.StatusQueued })
	claim()
	change(func(n *graph.Episode) { n.Content, n.Status = "Alice works at Initech.", graph.StatusQueued })
	if err := complete(); graph.ErrorCode(err) != graph.ECONFLICT {
		t.Fatalf("the worker's result for replaced content: %v, want the lease lost", err)
	}
	got, err := db.GetEpisode(ctx, e.UUID, vis)
	if err != nil || got.Status != graph.StatusQueued || got.Version != 4 || got.Content != "Alice works at Initech." {
		t.Fatalf("after the content update: %+v, %v", got, err)
	}
	claim() // queued again, and claimable
}

// A move or a rewrite queues a memory again, and the same worker may claim it again
// before the result of its older claim arrives: that result, extracted from another
// space or another text, is refused, and the newer one saved.
func TestComplete_RefusesAnExtractionOfAnotherSpaceOrText(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	agent := "stale-" + run
	if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: agent, OwnerID: "owner-" + run, CreatedAt: time.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	private, public := graph.DefaultOrg.Private(agent).GroupID(), graph.DefaultOrg.Public(agent).GroupID()
	vis := graph.Visible{GroupIDs: []string{private, public}}
	e := &graph.Episode{UUID: uuid.NewString(), Name: "n", GroupID: public, AgentID: agent, Source: graph.SourceText,
		Content: "Alice works at Acme.", ContentHash: "h1", CreatedAt: time.Now().UTC(), ValidAt: time.Now().UTC(), Status: graph.StatusQueued}
	if res := db.CreateEpisodes(ctx, []*graph.Episode{e})[0]; res.Err != nil {
		t.Fatal(res.Err)
	}
	worker := "w-" + run
	claim := func() *graph.Episode {
		t.Helper()
		claimed, _, err := db.Claim(ctx, worker, "agent-"+agent+"-", time.Minute, 1, 0)
		if err != nil || len(claimed) != 1 || claimed[0].Episode.UUID != e.UUID {
			t.Fatalf("claim: %v, %d claimed", err, len(claimed))
		}
		return claimed[0].Episode
	}
	change := func(mutate func(*graph.Episode)) {
		t.Helper()
		if _, err := db.UpdateEpisode(ctx, e.UUID, vis, 20, func(cur *graph.Episode, _ []graph.Version) (*graph.Episode, *graph.AuditEvent, error) {
			next := *cur
			now := time.Now().UTC()
			next.Version, next.UpdatedAt, next.UpdatedBy, next.Status = cur.Version+1, &now, "owner-"+run, graph.StatusQueued
			mutate(&next)
			return &next, nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	save := func(as *graph.Episode) error {
		t.Helper()
		entity := &graph.EntityNode{UUID: uuid.NewString(), Name: "Acme " + run, GroupID: as.GroupID,
			CreatedAt: time.Now().UTC(), Summary: as.Content}
		errs, err := db.Complete(ctx, worker, []*graph.GraphWrite{{Episode: as, Entities: []*graph.EntityNode{entity},
			Mentions: []graph.Mention{{Entity: entity.UUID}}}})
		if err != nil {
			t.Fatal(err)
		}
		return errs[0]
	}
	entitiesIn := func(group string) int64 {
		return neo4jtest.Count(t, "MATCH (n:Entity {group_id: $g}) RETURN count(n)", map[string]any{"g": group})
	}

	inPublic := claim()
	change(func(n *graph.Episode) { n.GroupID = private })
	inPrivate := claim()
	if err := save(inPublic); graph.ErrorCode(err) != graph.ECONFLICT {
		t.Errorf("the result extracted in the public space, saved after the move: %v, want refused", err)
	}
	if n := entitiesIn(public); n != 0 {
		t.Errorf("%d entities written into the space the memory left", n)
	}
	change(func(n *graph.Episode) { n.Content, n.ContentHash = "Alice works at Globex.", "h2" })
	rewritten := claim()
	if err := save(inPrivate); graph.ErrorCode(err) != graph.ECONFLICT {
		t.Errorf("the result of the old text, saved after the rewrite: %v, want refused", err)
	}
	if err := save(rewritten); err != nil {
		t.Errorf("the result of the current claim: %v, want saved", err)
	}
}
