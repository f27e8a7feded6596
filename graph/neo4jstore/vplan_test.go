package neo4jstore_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/cypher"
	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// The migration that creates the filtered index and the store's choice of plan name
// the same oldest Neo4j.
func TestFilteredSince(t *testing.T) {
	ms, err := cypher.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range ms {
		if m.Name == "fact_group_vector" {
			found = true
			if m.Neo4j != neo4jstore.FilteredSince {
				t.Errorf("%03d_%s requires Neo4j %q, the store filters in the index from %q", m.Version, m.Name, m.Neo4j, neo4jstore.FilteredSince)
			}
		} else if m.Neo4j != "" {
			t.Errorf("%03d_%s requires Neo4j %q: only fact_group_vector should", m.Version, m.Name, m.Neo4j)
		}
	}
	if !found {
		t.Error("no migration fact_group_vector")
	}
}

// On Neo4j 5.26 the version-gated migration is skipped (its version recorded all the
// same) and fact vector search keeps fact_search_vector.
func TestFiltersInIndex_Neo4j5(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	version, err := db.ServerVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cypher.AtLeast(version, neo4jstore.FilteredSince) {
		t.Skipf("the test database is Neo4j %s, which filters in the index: TestVectorPlan_InIndexSameAsExact covers it", version)
	}
	if db.FiltersInIndex(ctx) {
		t.Errorf("Neo4j %s: fact vector search filters inside the index", version)
	}
	if n := neo4jtest.Count(t, "SHOW INDEXES YIELD name WHERE name = 'fact_group_embedding' RETURN count(*)", nil); n != 0 {
		t.Errorf("Neo4j %s has fact_group_embedding", version)
	}
	if err := db.Ready(ctx); err != nil {
		t.Errorf("Ready on Neo4j %s with 013 skipped: %v", version, err)
	}
}

// On a Neo4j that filters inside the vector index (MG_TEST_NEO4J_2026_URI; skipped
// without it), the migration creates fact_group_embedding, the store chooses it, and
// the in-index plan, forced whatever the set's size, gives what exact cosine over the
// visible set gives (the same scores; ties may come in another order) on a small set
// and a middle one, never a hit of a decoy space that holds a copy of every visible
// fact, with the same text and so the same vector. memgate's choice is exact cosine on
// the small set and the in-index plan on the middle one (above exactFilteredMax).
func TestVectorPlan_InIndexSameAsExact(t *testing.T) {
	uri := neo4jtest.URI2026(t)
	db := neo4jtest.DBAt(t, uri)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	version, err := db.ServerVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !cypher.AtLeast(version, neo4jstore.FilteredSince) {
		t.Fatalf("MG_TEST_NEO4J_2026_URI is Neo4j %s, older than %s", version, neo4jstore.FilteredSince)
	}
	if on, err := db.AwaitFilteredIndex(ctx); err != nil || !on {
		t.Fatalf("Neo4j %s: fact vector search does not filter inside fact_group_embedding (%v)", version, err)
	}
	run := uuid.NewString()[:8]
	neo4jtest.ForgetAt(t, uri, run)
	emb := extract.Hashing{Dimensions: neo4jtest.Dimensions}
	alice, acme := "Alice"+run, "Acme"+run
	write := func(space graph.Space, n int) { saveWorksAt(t, db, run, space, n) }
	small, middle := graph.DefaultOrg.Private("ivplan-s-"+run), graph.DefaultOrg.Private("ivplan-m-"+run)
	decoy := graph.DefaultOrg.Private("ivplan-d-" + run)
	if neo4jstore.ExactFilteredMax >= 400 {
		t.Fatalf("the middle set (400 facts) must lie above the in-index plan's exact limit %d", neo4jstore.ExactFilteredMax)
	}
	write(small, 30)
	write(middle, 400)
	write(decoy, 400)
	q, _ := emb.Embed(ctx, []string{"Where does " + alice + "-17 work? As a nurse at " + acme + "?"})

	for _, set := range []struct {
		name   string
		spaces []graph.Space
	}{{"small", []graph.Space{small}}, {"middle", []graph.Space{middle}}, {"two spaces", []graph.Space{small, middle}}} {
		t.Run(set.name, func(t *testing.T) {
			vis := graph.Visible{}
			for _, s := range set.spaces {
				vis.GroupIDs = append(vis.GroupIDs, s.GroupID())
			}
			hits := func(hs []graph.FactHit, err error) []graph.FactHit {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				return hs
			}
			exact := hits(db.FactsByVectorPlan(ctx, q[0], vis, 10, 1<<30, 400))
			check := func(what string, got []graph.FactHit, sameOrder bool) {
				t.Helper()
				if len(exact) != 10 || len(got) != len(exact) {
					t.Fatalf("%s: %d hits, exact cosine %d; want 10 each", what, len(got), len(exact))
				}
				for i, h := range got {
					if h.Fact.GroupID == decoy.GroupID() || (h.Fact.GroupID != vis.GroupIDs[0] && h.Fact.GroupID != vis.GroupIDs[len(vis.GroupIDs)-1]) {
						t.Errorf("%s: hit %d (%s) from %s, outside the visible set", what, i, h.Fact.UUID, h.Fact.GroupID)
					}
					if math.Abs(h.Score-exact[i].Score) > 1e-6 || sameOrder && h.Fact.UUID != exact[i].Fact.UUID {
						t.Errorf("%s: hit %d is %s (%.6f), exact cosine's %s (%.6f)", what, i, h.Fact.UUID, h.Score,
							exact[i].Fact.UUID, exact[i].Score)
					}
				}
			}
			check("in-index plan", hits(db.FactsInIndex(ctx, q[0], vis, 10, neo4jstore.FilteredCandidates(10))), false)
			before := ran(db)
			check("memgate's plan", hits(db.FactsByVector(ctx, q[0], vis, graph.SearchFilter{}, 10)), false)
			// It ran the filtered query, and never fell back to the 5.26 one.
			after := ran(db)
			if after["fact_search_vector_filtered"] == before["fact_search_vector_filtered"] ||
				after["fact_search_vector"] != before["fact_search_vector"] {
				t.Errorf("memgate's plan ran fact_search_vector_filtered %d times and fact_search_vector %d; want only the first",
					after["fact_search_vector_filtered"]-before["fact_search_vector_filtered"],
					after["fact_search_vector"]-before["fact_search_vector"])
			}
		})
	}
}

// ran counts the runs of each query of db so far.
func ran(db *neo4jstore.DB) map[string]int64 {
	out := map[string]int64{}
	db.QueryStats(func(name string, s *neo4jstore.QueryStat) { out[name] = s.Count.Load() })
	return out
}
