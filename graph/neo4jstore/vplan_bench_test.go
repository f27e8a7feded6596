package neo4jstore_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// BenchmarkVectorPlans finds where the vector index becomes cheaper than exact cosine
// over the visible set (exactVectorMax in search.go). It writes one corpus of the
// search benchmark's generated facts (MG_BENCH_PLAN_TOTAL, 50,000 unless set), in which
// one agent per visible size (MG_BENCH_PLAN_VISIBLE, comma-separated numbers of facts:
// 100 to 25,000 unless set) holds that many facts in its two spaces and the rest are
// agents of 100 facts. For each visible size it times side by side, facts and
// entities: the exact plan forced, the index plan forced (with its widening) and
// memgate's choice, and reports each plan's recall@10 against exact cosine computed
// here. On Neo4j 2026.01 and later it adds the in-index plan forced
// (fact_search_vector_filtered), which memgate's choice is there above exactVectorMax.
// At the end it logs, for facts and for entities, the smallest visible size from
// which the index plan's p50 stays below the exact plan's: the crossover.
func BenchmarkVectorPlans(b *testing.B) {
	emb, embedder, dims := benchEmbedder(b)
	db := neo4jtest.DBWith(b, dims)
	ctx := context.Background()
	version, err := db.ServerVersion(ctx)
	if err != nil {
		b.Fatal(err)
	}
	total, err := strconv.Atoi(cmp.Or(os.Getenv("MG_BENCH_PLAN_TOTAL"), "50000"))
	if err != nil {
		b.Fatalf("MG_BENCH_PLAN_TOTAL: %v", err)
	}
	var sizes []int
	for _, f := range strings.Split(cmp.Or(os.Getenv("MG_BENCH_PLAN_VISIBLE"), "100,500,1000,2500,4000,5000,10000,25000"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 {
			b.Fatalf("MG_BENCH_PLAN_VISIBLE: %q is not a number of facts of at least 100", f)
		}
		sizes = append(sizes, n)
	}
	// On Neo4j 2026 and later, in-index filtering is measured beside the two plans.
	inIndex := !strings.HasPrefix(version, "5.")
	if inIndex {
		if on, err := db.AwaitFilteredIndex(ctx); err != nil || !on {
			b.Fatalf("fact_group_embedding is not searched on Neo4j %s: %v", version, err)
		}
	}
	b.Logf("Neo4j %s, %s embedder, %d facts in all, exactVectorMax %d", version, embedder, total, neo4jstore.ExactVectorMax)
	w := newWorld(uuid.NewString()[:8])
	start := time.Now()
	requesters := map[int]*searchCorpus{}
	for _, n := range sizes {
		c := w.watch(fmt.Sprintf("vp-%s-%d", w.run, n))
		requesters[n] = c
		w.grow(b, db, emb, c.agent, n)
	}
	for w.total < total {
		w.grow(b, db, emb, fmt.Sprintf("vp-%s-%06d", w.run, w.total), min(100, total-w.total))
	}
	b.Logf("%d facts written in %v", w.total, time.Since(start).Round(time.Second))
	settled(b)

	type row struct{ factExact, factIndex, entityExact, entityIndex time.Duration }
	rows := map[int]*row{}
	visibleEntities := map[int]int{}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("visible-%d", n), func(b *testing.B) {
			c := requesters[n]
			vis := graph.Visible{GroupIDs: c.visible}
			entities := w.visibleEntities(c)
			visibleEntities[n] = len(entities)
			vectors, err := emb.Embed(ctx, c.queries)
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			next := func() []float32 { i++; return vectors[i%len(vectors)] }
			const exact, index = 1 << 30, 0
			facts := func(exactMax int) func(v []float32) ([]graph.FactHit, error) {
				return func(v []float32) ([]graph.FactHit, error) {
					return db.FactsByVectorPlan(ctx, v, vis, 10, exactMax, 400) // factCandidates(10)
				}
			}
			ents := func(exactMax int) func(v []float32) ([]graph.EntityHit, error) {
				return func(v []float32) ([]graph.EntityHit, error) {
					return db.EntitiesByVectorPlan(ctx, v, vis, 10, exactMax)
				}
			}
			// Every plan must find something, but the entity index forced: asked once, it
			// may find only other spaces' entities (its recall@10 says how often).
			call := func(name string, f func([]float32) (int, error)) variant {
				return variant{name, func() error {
					hits, err := f(next())
					if err == nil && hits == 0 && name != "entities-index" {
						err = fmt.Errorf("no hits")
					}
					return err
				}}
			}
			nf := func(f func([]float32) ([]graph.FactHit, error)) func([]float32) (int, error) {
				return func(v []float32) (int, error) { h, err := f(v); return len(h), err }
			}
			ne := func(f func([]float32) ([]graph.EntityHit, error)) func([]float32) (int, error) {
				return func(v []float32) (int, error) { h, err := f(v); return len(h), err }
			}
			choiceFacts := func(v []float32) ([]graph.FactHit, error) {
				return db.FactsByVector(ctx, v, vis, graph.SearchFilter{}, 10)
			}
			choiceEntities := func(v []float32) ([]graph.EntityHit, error) {
				return db.EntitiesByVector(ctx, v, vis, graph.SearchFilter{}, 10)
			}
			inIndexed := func(v []float32) ([]graph.FactHit, error) {
				return db.FactsInIndex(ctx, v, vis, 10, neo4jstore.FilteredCandidates(10))
			}
			variants := []variant{
				call("facts-exact", nf(facts(exact))), call("facts-index", nf(facts(index))), call("facts-choice", nf(choiceFacts)),
				call("entities-exact", ne(ents(exact))), call("entities-index", ne(ents(index))), call("entities-choice", ne(choiceEntities))}
			// The in-index plan forced (what memgate chooses above exactVectorMax on
			// such a server), first with filteredCandidates per space, then with as
			// few as the hits wanted.
			inIndexed10 := func(v []float32) ([]graph.FactHit, error) { return db.FactsInIndex(ctx, v, vis, 10, 10) }
			if inIndex {
				variants = append(variants, call("facts-in-index", nf(inIndexed)), call("facts-in-index-k10", nf(inIndexed10)))
			}
			p50 := sideBySide(b, variants...)
			if inIndex {
				b.ReportMetric(recall(b, c, emb, inIndexed), "facts-in-index-recall@10")
				b.ReportMetric(recall(b, c, emb, inIndexed10), "facts-in-index-k10-recall@10")
			}
			b.ReportMetric(recall(b, c, emb, choiceFacts), "facts-choice-recall@10")
			b.ReportMetric(float64(len(c.facts)), "visible-facts")
			b.ReportMetric(float64(len(entities)), "visible-entities")
			b.ReportMetric(recall(b, c, emb, facts(exact)), "facts-exact-recall@10")
			b.ReportMetric(recall(b, c, emb, facts(index)), "facts-index-recall@10")
			b.ReportMetric(entityRecall(b, c, entities, emb, ents(exact)), "entities-exact-recall@10")
			b.ReportMetric(entityRecall(b, c, entities, emb, ents(index)), "entities-index-recall@10")
			rows[n] = &row{factExact: p50["facts-exact"], factIndex: p50["facts-index"],
				entityExact: p50["entities-exact"], entityIndex: p50["entities-index"]}
		})
	}
	// The crossover: the smallest size from which the index plan is cheaper at every
	// size measured above it.
	crossover := func(exact, index func(*row) time.Duration) string {
		from := ""
		for k := len(sizes) - 1; k >= 0; k-- {
			r := rows[sizes[k]]
			if r == nil || index(r) >= exact(r) {
				break
			}
			from = fmt.Sprint(sizes[k])
		}
		return cmp.Or(from, "none measured")
	}
	for _, n := range sizes {
		if r := rows[n]; r != nil {
			b.Logf("visible %6d facts (%6d entities): facts exact %v index %v; entities exact %v index %v", n, visibleEntities[n],
				r.factExact, r.factIndex, r.entityExact, r.entityIndex)
		}
	}
	b.Logf("index cheaper from: facts %s, entities: the requester seeing %s facts",
		crossover(func(r *row) time.Duration { return r.factExact }, func(r *row) time.Duration { return r.factIndex }),
		crossover(func(r *row) time.Duration { return r.entityExact }, func(r *row) time.Duration { return r.entityIndex }))
}

// visibleEntities are the entities the world wrote into c's spaces.
func (w *world) visibleEntities(c *searchCorpus) []*graph.EntityNode {
	var out []*graph.EntityNode
	for _, e := range w.entities {
		for _, g := range c.visible {
			if e.GroupID == g {
				out = append(out, e)
			}
		}
	}
	return out
}

// entityRecall is recall's for entities: the share of the exact cosine top 10 over
// entities that a search returns, ties counted as found.
func entityRecall(b *testing.B, c *searchCorpus, entities []*graph.EntityNode, emb extract.Embedder,
	search func(v []float32) ([]graph.EntityHit, error)) float64 {
	ctx := context.Background()
	embedding := map[string][]float32{}
	for _, e := range entities {
		embedding[e.UUID] = e.NameEmbedding
	}
	total, found := 0, 0
	for _, q := range c.queries {
		v, err := emb.Embed(ctx, []string{q})
		if err != nil {
			b.Fatal(err)
		}
		exact := make([]float64, len(entities))
		for i, e := range entities {
			exact[i] = cos(v[0], e.NameEmbedding)
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(exact)))
		hits, err := search(v[0])
		if err != nil {
			b.Fatal(err)
		}
		good := 0
		for _, h := range hits {
			if e := embedding[h.Entity.UUID]; e != nil && cos(v[0], e) >= exact[min(9, len(exact)-1)]-1e-6 {
				good++
			}
		}
		want := min(10, len(entities))
		total, found = total+want, found+min(good, want)
	}
	return float64(found) / float64(total)
}
