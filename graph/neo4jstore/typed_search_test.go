package neo4jstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestTypedFilters_EveryPlan: the type and attribute filters hold in every search
// query and plan (the index plans of a space too large to score exactly, the exact
// ones of a small one, the one-round-trip query) and in both lists: every hit is of the
// types and values asked for, and of the visible space, never of a decoy space holding
// the same names, labels and values.
func TestTypedFilters_EveryPlan(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	big, small, decoy := graph.DefaultOrg.Private("typed-big-"+run), graph.DefaultOrg.Private("typed-small-"+run),
		graph.DefaultOrg.Private("typed-decoy-"+run)
	emb := extract.Hashing{Dimensions: neo4jtest.Dimensions}
	now := time.Now().UTC()
	write := func(space graph.Space, n int) {
		var entities []*graph.EntityNode
		var facts []*graph.Fact
		for i := range n {
			tier := []string{"gold", "silver"}[i%2]
			names := []string{fmt.Sprintf("Dana %d", i), fmt.Sprintf("router X%d", i)}
			texts := []string{fmt.Sprintf("Dana %d purchased router X%d.", i, i)}
			vectors, _ := emb.Embed(ctx, append(names, texts...))
			c := &graph.EntityNode{UUID: uuid.NewString(), Name: names[0], GroupID: space.GroupID(), Type: "Customer",
				Summary: "a customer", CreatedAt: now, NameEmbedding: vectors[0], Attributes: map[string]any{"tier": tier}}
			p := &graph.EntityNode{UUID: uuid.NewString(), Name: names[1], GroupID: space.GroupID(), Type: "Product",
				Summary: "a router", CreatedAt: now, NameEmbedding: vectors[1], Attributes: map[string]any{"price": float64(i % 3)}}
			rel := []string{"PURCHASED", "RETURNED"}[i%4/2]
			facts = append(facts, &graph.Fact{UUID: uuid.NewString(), Name: rel, Fact: texts[0], SourceUUID: c.UUID,
				TargetUUID: p.UUID, GroupID: space.GroupID(), Episodes: []string{uuid.NewString()}, CreatedAt: now,
				FactEmbedding: vectors[2], Attributes: map[string]any{"quantity": int64(i % 3)}})
			entities = append(entities, c, p)
		}
		if err := db.SaveGraph(ctx, entities, facts); err != nil {
			t.Fatal(err)
		}
	}
	sizes := map[graph.Space]int{big: 310, small: 12, decoy: 12} // big: past exactSearchMax (300) for facts and entities
	for space, n := range sizes {
		write(space, n)
	}

	filter := graph.TypeFilter{EntityTypes: []string{"Customer"}, EdgeTypes: []string{"PURCHASED"},
		Attributes:     []graph.AttributeFilter{{Name: "tier", Values: []any{"gold"}}},
		EdgeAttributes: []graph.AttributeFilter{{Name: "quantity", Values: []any{int64(1)}}}}
	checkFact := func(what string, space graph.Space, h graph.FactHit) {
		t.Helper()
		if h.Fact.GroupID != space.GroupID() || h.Fact.Name != "PURCHASED" || h.Fact.Attributes["quantity"] != int64(1) ||
			h.Source.Type != "Customer" {
			t.Errorf("%s: fact %q (%s, %s, %v, source %s) passed the filter", what, h.Fact.Fact, h.Fact.GroupID, h.Fact.Name,
				h.Fact.Attributes, h.Source.Type)
		}
	}
	checkEntity := func(what string, space graph.Space, e *graph.EntityNode) {
		t.Helper()
		if e.GroupID != space.GroupID() || e.Type != "Customer" || e.Attributes["tier"] != "gold" {
			t.Errorf("%s: entity %s (%s, %s, %v) passed the filter", what, e.Name, e.GroupID, e.Type, e.Attributes)
		}
	}
	q := "Dana purchased router"
	v, _ := emb.Embed(ctx, []string{q})
	for _, space := range []graph.Space{big, small} {
		vis := graph.Visible{GroupIDs: []string{space.GroupID()}}
		f := graph.SearchFilter{TypeFilter: filter}
		var facts []graph.FactHit
		var entities []graph.EntityHit
		for _, m := range []func() error{
			func() error { h, err := db.FactsByText(ctx, q, vis, f, 5); facts = append(facts, h...); return err },
			func() error {
				h, err := db.FactsByVector(ctx, v[0], vis, f, 5)
				facts = append(facts, h...)
				return err
			},
			func() error {
				h, err := db.EntitiesByText(ctx, q, vis, f, 5)
				entities = append(entities, h...)
				return err
			},
			func() error {
				h, err := db.EntitiesByVector(ctx, v[0], vis, f, 5)
				entities = append(entities, h...)
				return err
			},
		} {
			if err := m(); err != nil {
				t.Fatal(err)
			}
		}
		found, err := db.SearchSmall(ctx, graph.Retrieval{Text: q, Vector: v[0], Facts: true, Entities: true}, vis, f, 5)
		if err != nil {
			t.Fatal(err)
		}
		if found != nil {
			for _, l := range found.Facts {
				facts = append(facts, l...)
			}
			for _, l := range found.Entities {
				entities = append(entities, l...)
			}
		} else if space == small {
			t.Errorf("the small space was not searched in one round trip")
		}
		// Each method finds some, and all of them typed.
		if len(facts) < 2 || len(entities) < 2 {
			t.Errorf("%s: %d facts, %d entities found; the test shows nothing", space.GroupID(), len(facts), len(entities))
		}
		for _, h := range facts {
			checkFact("search "+space.GroupID(), space, h)
		}
		for _, h := range entities {
			checkEntity("search "+space.GroupID(), space, h.Entity)
		}
		page, err := db.Facts(ctx, vis, filter, graph.PageRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		// A gold customer (i even) PURCHASED (i%4 < 2) a quantity of 1 (i%3 == 1): i%12 == 4.
		wantFacts := 0
		for i := range sizes[space] {
			if i%12 == 4 {
				wantFacts++
			}
		}
		if len(page.Facts) != wantFacts {
			t.Errorf("%s: the list holds %d facts, want %d", space.GroupID(), len(page.Facts), wantFacts)
		}
		for _, h := range page.Facts {
			checkFact("list "+space.GroupID(), space, h)
		}
		ents, err := db.Entities(ctx, vis, graph.EntityFilter{TypeFilter: filter}, graph.PageRequest{Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		if want := (sizes[space] + 1) / 2; len(ents.Entities) != want {
			t.Errorf("%s: the list holds %d entities, want %d gold customers", space.GroupID(), len(ents.Entities), want)
		}
		for _, e := range ents.Entities {
			checkEntity("list "+space.GroupID(), space, e)
		}
	}
}
