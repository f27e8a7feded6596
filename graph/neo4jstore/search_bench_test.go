package neo4jstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/handlers"
	"github.com/memgate/memgate/service"
)

// The generator's vocabulary: people, organisations, places and pastimes, and the
// sentences facts between them are written in.
var (
	firstNames = []string{"Maria", "James", "Aiko", "Olu", "Priya", "Lukas", "Sofia", "Chen", "Amara", "Diego",
		"Hannah", "Mateo", "Fatima", "Noah", "Ingrid", "Kwame", "Elena", "Ravi", "Zoe", "Tomasz"}
	lastNames = []string{"Lopez", "Smith", "Tanaka", "Adeyemi", "Sharma", "Becker", "Rossi", "Wei", "Okafor",
		"Garcia", "Berg", "Novak", "Haddad", "Kim", "Larsen", "Mensah", "Petrova", "Iyer", "Brown", "Kowalski"}
	orgs = []string{"Northwind", "Globex", "Initech", "Acme", "Umbrella Labs", "Stark Industries", "Wayne Foods",
		"Hooli", "Vandelay Imports", "Tyrell Systems", "Cyberdyne", "Soylent Health", "Aperture Science", "Massive Dynamic"}
	cities = []string{"Lisbon", "Osaka", "Lagos", "Pune", "Hamburg", "Turin", "Chengdu", "Accra", "Bogota", "Oslo",
		"Krakow", "Beirut", "Busan", "Nairobi", "Montreal", "Porto", "Seville", "Tallinn"}
	pastimes = []string{"rock climbing", "sourdough baking", "jazz piano", "trail running", "chess", "birdwatching",
		"pottery", "sailing", "salsa dancing", "astronomy", "gardening", "photography"}
	roles = []string{"data engineer", "product manager", "nurse", "accountant", "designer", "site reliability engineer",
		"teacher", "lawyer", "researcher", "sales lead"}
)

// searchCorpus is one generated shape: facts in spaces, the embeddings it wrote, and
// what a requester looking at one agent sees.
type searchCorpus struct {
	owner   string        // the requester who owns agent
	agent   string        // the agent the benchmark searches
	visible []string      // its two spaces
	facts   []*graph.Fact // the facts in those spaces
	people  []string      // entity uuids of people in those spaces: centers for the walk
	queries []string      // questions about those spaces
}

// generate writes facts spread over agents (half of each agent's facts private, half
// public), with entities per agent for its facts, embedded with emb. It returns what
// the benchmark searches: agent 0.
func generate(b *testing.B, db *neo4jstore.DB, emb extract.Embedder, run string, agents, facts int) *searchCorpus {
	ctx := context.Background()
	r := rand.New(rand.NewSource(int64(agents)))
	perAgent := facts / agents
	c := &searchCorpus{agent: fmt.Sprintf("sb-%s-%04d", run, 0)}
	c.visible = []string{graph.PrivateSpace(c.agent).GroupID(), graph.PublicSpace(c.agent).GroupID()}
	start := time.Now()
	for a := 0; a < agents; a++ {
		agent := fmt.Sprintf("sb-%s-%04d", run, a)
		now := time.Now().UTC()
		var entities []*graph.EntityNode
		var fs []*graph.Fact
		// An agent's world: people, and the organisations, places and pastimes facts
		// point at; about one entity per two facts, as conversations repeat names.
		byName := map[string]*graph.EntityNode{}
		entity := func(space graph.Space, name, typ string) *graph.EntityNode {
			key := space.GroupID() + "/" + name
			if e := byName[key]; e != nil {
				return e
			}
			e := &graph.EntityNode{UUID: uuid.NewString(), Name: name, GroupID: space.GroupID(), Type: typ,
				Summary: typ + " " + name, CreatedAt: now}
			byName[key] = e
			entities = append(entities, e)
			return e
		}
		people := max(4, perAgent/4)
		for i := 0; i < perAgent; i++ {
			space := graph.PrivateSpace(agent)
			if i%2 == 1 {
				space = graph.PublicSpace(agent)
			}
			p := r.Intn(people)
			person := entity(space, firstNames[p%len(firstNames)]+" "+lastNames[(p/len(firstNames)+p)%len(lastNames)]+fmt.Sprint(p/400), "Person")
			var target *graph.EntityNode
			var relation, sentence string
			switch k := r.Intn(5); k {
			case 0:
				target = entity(space, orgs[r.Intn(len(orgs))], "Organization")
				relation, sentence = "WORKS_AT", fmt.Sprintf("%s works at %s as a %s.", person.Name, target.Name, roles[r.Intn(len(roles))])
			case 1:
				target = entity(space, cities[r.Intn(len(cities))], "Location")
				relation, sentence = "LIVES_IN", fmt.Sprintf("%s lives in %s.", person.Name, target.Name)
			case 2:
				q := r.Intn(people)
				target = entity(space, firstNames[q%len(firstNames)]+" "+lastNames[(q/len(firstNames)+q)%len(lastNames)]+fmt.Sprint(q/400), "Person")
				relation, sentence = "KNOWS", fmt.Sprintf("%s knows %s from %s.", person.Name, target.Name, cities[r.Intn(len(cities))])
			case 3:
				target = entity(space, pastimes[r.Intn(len(pastimes))], "Topic")
				relation, sentence = "LIKES", fmt.Sprintf("%s enjoys %s on weekends.", person.Name, target.Name)
			default:
				target = entity(space, cities[r.Intn(len(cities))], "Location")
				relation, sentence = "VISITED", fmt.Sprintf("%s visited %s in %d.", person.Name, target.Name, 2015+r.Intn(10))
			}
			valid := now.AddDate(0, -r.Intn(60), 0)
			f := &graph.Fact{UUID: uuid.NewString(), Name: relation, Fact: sentence, SourceUUID: person.UUID,
				TargetUUID: target.UUID, GroupID: space.GroupID(), Episodes: []string{uuid.NewString()}, CreatedAt: now, ValidAt: &valid}
			fs = append(fs, f)
			if a == 0 {
				c.facts = append(c.facts, f)
				if i < 40 {
					c.queries = append(c.queries, []string{
						"Where does " + person.Name + " work?", "Who lives in " + target.Name + "?",
						"what does " + person.Name + " do on weekends", person.Name + " " + relation,
					}[i%4])
				}
			}
		}
		texts := make([]string, 0, len(entities)+len(fs))
		for _, e := range entities {
			texts = append(texts, e.Name)
		}
		for _, f := range fs {
			texts = append(texts, f.Fact)
		}
		var vectors [][]float32
		for lo := 0; lo < len(texts); lo += 1000 { // a provider takes at most 2,048 inputs per call
			v, err := emb.Embed(ctx, texts[lo:min(lo+1000, len(texts))])
			if err != nil {
				b.Fatalf("embedding the corpus: %v", err)
			}
			vectors = append(vectors, v...)
		}
		for i, e := range entities {
			e.NameEmbedding = vectors[i]
			if a == 0 && e.Type == "Person" {
				c.people = append(c.people, e.UUID)
			}
		}
		for i, f := range fs {
			f.FactEmbedding = vectors[len(entities)+i]
		}
		// Entities first, then the facts between them, 2,000 to a transaction: one
		// space's 25,000 entities in one transaction exceeded Neo4j's transaction
		// memory with 384-dimension embeddings.
		for lo := 0; lo < len(entities); lo += 2000 {
			if err := db.SaveGraph(ctx, entities[lo:min(lo+2000, len(entities))], nil); err != nil {
				b.Fatalf("writing the corpus: %v", err)
			}
		}
		for lo := 0; lo < len(fs); lo += 2000 {
			if err := db.SaveGraph(ctx, nil, fs[lo:min(lo+2000, len(fs))]); err != nil {
				b.Fatalf("writing the corpus: %v", err)
			}
		}
	}
	b.Logf("%d facts over %d agents written in %v", facts, agents, time.Since(start).Round(time.Second))
	return c
}

// recall is the share of the exact cosine top 10 (computed here over the facts
// generated) that the vector path returns. Facts with the same text tie, so a hit
// scoring at least the tenth exact score counts as one of the ten.
func recall(b *testing.B, db *neo4jstore.DB, c *searchCorpus, emb extract.Embedder) float64 {
	ctx := context.Background()
	vis := graph.Visible{GroupIDs: c.visible}
	embedding := map[string][]float32{}
	for _, f := range c.facts {
		embedding[f.UUID] = f.FactEmbedding
	}
	total, found := 0, 0
	for _, q := range c.queries {
		v, err := emb.Embed(ctx, []string{q})
		if err != nil {
			b.Fatal(err)
		}
		exact := make([]float64, len(c.facts))
		for i, f := range c.facts {
			exact[i] = cos(v[0], f.FactEmbedding)
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(exact)))
		hits, err := db.FactsByVector(ctx, v[0], vis, graph.SearchFilter{IncludeExpired: true}, 10)
		if err != nil {
			b.Fatal(err)
		}
		good := 0
		for _, h := range hits {
			if cos(v[0], embedding[h.Fact.UUID]) >= exact[9]-1e-6 {
				good++
			}
		}
		total, found = total+10, found+min(good, 10)
	}
	return float64(found) / float64(total)
}

func cos(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot, na, nb = dot+float64(a[i])*float64(b[i]), na+float64(a[i])*float64(a[i]), nb+float64(b[i])*float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

var corpora = map[string]*searchCorpus{}

// benchEmbedder is the embedder the hybrid benchmark embeds with: memgate's openai
// embedder when MEMGATE_BENCH_EMBEDDER_URL names an OpenAI-compatible endpoint
// (scripts/bench starts scripts/embedder-local, a real sentence model), with
// MEMGATE_BENCH_EMBEDDER_MODEL and _DIMENSIONS; else the offline hashing embedder.
// The name is the model's, or hashing.
func benchEmbedder(b *testing.B) (emb extract.Embedder, name string, dimensions int) {
	url, model := os.Getenv("MEMGATE_BENCH_EMBEDDER_URL"), os.Getenv("MEMGATE_BENCH_EMBEDDER_MODEL")
	switch {
	case url == "" && model != "":
		b.Fatal("MEMGATE_BENCH_EMBEDDER_MODEL is set without MEMGATE_BENCH_EMBEDDER_URL (did the model server start?)")
	case url == "":
		return extract.Hashing{Dimensions: neo4jtest.Dimensions}, "hashing", neo4jtest.Dimensions
	}
	dims, err := strconv.Atoi(os.Getenv("MEMGATE_BENCH_EMBEDDER_DIMENSIONS"))
	if err != nil {
		b.Fatalf("MEMGATE_BENCH_EMBEDDER_DIMENSIONS: %v", err)
	}
	return extract.NewOpenAI(extract.OpenAIOptions{BaseURL: url, Model: model, Timeout: 5 * time.Minute,
		MaxConcurrency: 1, MaxRetries: 2, Dimensions: dims, Metrics: &extract.Metrics{}, Log: neo4jtest.Logger(b)}, nil), model, dims
}

// BenchmarkHybridSearch measures search over 100,000 generated facts in two shapes:
// spread over 1,000 agents, and all in one agent's spaces. Side by side in each: the
// search endpoint (POST /v1/memories/search through the HTTP handler, every method
// fused); the five store queries it makes (facts and entities by text and by vector,
// episodes by text) at once, without HTTP or the query's embedding (retrieval); facts
// by text, facts by vector and the graph walk alone; and Graphiti's query shape for
// fact similarity (cosine over every fact of the visible groups, no index) as the
// reference. It also reports the recall@10 of the vector path against exact cosine.
// The queries are embedded once beforehand for the methods alone; the search endpoint
// embeds its query with the embedder, as in service.
func BenchmarkHybridSearch(b *testing.B) {
	emb, embedder, dims := benchEmbedder(b)
	db := neo4jtest.DBWith(b, dims)
	ctx := context.Background()
	for _, shape := range []struct {
		name          string
		agents, facts int
	}{{"1000-agents", 1000, 100_000}, {"one-space", 1, 100_000}} {
		b.Run(shape.name+"-"+embedder, func(b *testing.B) {
			// Go runs a benchmark body once with b.N = 1 before the measured run: the
			// corpus is written once per shape and process.
			if corpora[shape.name] == nil {
				run := uuid.NewString()[:8]
				c := generate(b, db, emb, run, shape.agents, shape.facts)
				c.owner = "sb-owner-" + run
				if err := db.CreateAgent(ctx, &graph.Agent{ID: c.agent, OwnerID: c.owner, CreatedAt: time.Now()}, neo4jtest.AuditEvent(run)()); err != nil {
					b.Fatal(err)
				}
				corpora[shape.name] = c
				// After a burst of writes Neo4j merges the vector index's segments in
				// the background: one core was busy for about a minute after each
				// corpus. Search is measured on the settled index.
				time.Sleep(2 * time.Minute)
			}
			c := corpora[shape.name]
			ring, _ := access.NewKeyring(nil, nil)
			srv := httptest.NewServer(handlers.New(handlers.Deps{
				Log: neo4jtest.Logger(b), Keys: ring, Ready: db, BodyLimit: "1M", HandlerTimeout: 10 * time.Second,
				Service: &service.Service{Auth: access.Policy{AllowPrivate: true}, Dir: db, Mem: db, Find: db, Queue: db,
					Audit: db, Embedder: emb, Log: neo4jtest.Logger(b), Now: time.Now,
					Limits: service.Limits{PageSizeDefault: 10, PageSizeMax: 100}},
			}))
			defer srv.Close()
			vis := graph.Visible{GroupIDs: c.visible}
			vectors, err := emb.Embed(ctx, c.queries)
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			next := func() (string, []float32) {
				i++
				return c.queries[i%len(c.queries)], vectors[i%len(c.queries)]
			}
			none := graph.SearchFilter{}
			sideBySide(b,
				variant{"fused", func() error {
					q, _ := next()
					body, _ := json.Marshal(map[string]any{"agent_id": c.agent, "query": q, "limit": 10})
					req, _ := http.NewRequest("POST", srv.URL+"/v1/memories/search", bytes.NewReader(body))
					req.Header.Set("X-Requester-Id", c.owner)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						return err
					}
					var out struct{ Facts []json.RawMessage }
					err = json.NewDecoder(resp.Body).Decode(&out)
					resp.Body.Close()
					if err == nil && (resp.StatusCode != http.StatusOK || len(out.Facts) == 0) {
						err = fmt.Errorf("status %d, %d facts", resp.StatusCode, len(out.Facts))
					}
					return err
				}},
				variant{"retrieval", func() error { // the store's part of fused: its five queries at once
					q, v := next()
					var wg sync.WaitGroup
					errs := make([]error, 5)
					for k, query := range []func() error{
						func() error { _, err := db.FactsByText(ctx, q, vis, none, 10); return err },
						func() error { _, err := db.FactsByVector(ctx, v, vis, none, 10); return err },
						func() error { _, err := db.EntitiesByText(ctx, q, vis, none, 10); return err },
						func() error { _, err := db.EntitiesByVector(ctx, v, vis, none, 10); return err },
						func() error { _, err := db.SearchEpisodes(ctx, q, vis, none, 10); return err },
					} {
						wg.Add(1)
						go func() { defer wg.Done(); errs[k] = query() }()
					}
					wg.Wait()
					return errors.Join(errs...)
				}},
				variant{"fulltext", func() error {
					q, _ := next()
					_, err := db.FactsByText(ctx, q, vis, none, 10)
					return err
				}},
				variant{"vector", func() error {
					_, v := next()
					hits, err := db.FactsByVector(ctx, v, vis, none, 10)
					if err == nil && len(hits) == 0 {
						err = fmt.Errorf("no hits")
					}
					return err
				}},
				variant{"graph", func() error {
					i++
					_, err := db.Walk(ctx, c.people[i%len(c.people)], 2, vis, none, 10)
					return err
				}},
				variant{"graphiti-scan", func() error {
					_, v := next()
					n, err := db.ScanFacts(ctx, v, c.visible, 10)
					if err == nil && n == 0 {
						err = fmt.Errorf("no hits")
					}
					return err
				}},
			)
			b.ReportMetric(recall(b, db, c, emb), "recall@10")
			b.ReportMetric(float64(len(c.facts)), "visible-facts")
			b.ReportMetric(float64(dims), "dimensions")
		})
	}
}
