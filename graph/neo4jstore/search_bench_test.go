package neo4jstore_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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

// world is the generated corpus of the search benchmark, grown in steps: facts of
// many agents (half of each agent's facts private, half public), with about one
// entity per two facts, as conversations repeat names. Facts added to an agent later
// reuse the entities written before.
type world struct {
	run      string
	r        *rand.Rand
	entities map[string]*graph.EntityNode // by space and name
	written  map[string]int               // facts per agent
	watched  map[string]*searchCorpus     // the requesters' agents: what they see
	total    int
}

// searchCorpus is what a requester searching one agent sees.
type searchCorpus struct {
	owner   string        // the requester, who owns agent
	agent   string        // the agent it searches
	visible []string      // its two spaces
	facts   []*graph.Fact // the facts in those spaces
	people  []string      // entity uuids of people in those spaces: centers for the walk
	queries []string      // questions about those spaces
}

func newWorld(run string) *world {
	return &world{run: run, r: rand.New(rand.NewSource(1)), entities: map[string]*graph.EntityNode{},
		written: map[string]int{}, watched: map[string]*searchCorpus{}}
}

// watch makes agent one a requester searches: its facts are kept for recall and
// questions about them are asked.
func (w *world) watch(agent string) *searchCorpus {
	c := &searchCorpus{owner: "sb-owner-" + w.run, agent: agent,
		visible: []string{graph.DefaultOrg.Private(agent).GroupID(), graph.DefaultOrg.Public(agent).GroupID()}}
	w.watched[agent] = c
	return c
}

// grow writes n more facts into agent's spaces, embedded with emb.
func (w *world) grow(b *testing.B, db *neo4jstore.DB, emb extract.Embedder, agent string, n int) {
	ctx, r, now := context.Background(), w.r, time.Now().UTC()
	watched := w.watched[agent]
	var entities []*graph.EntityNode
	entity := func(space graph.Space, name, typ string) *graph.EntityNode {
		key := space.GroupID() + "/" + name
		if e := w.entities[key]; e != nil {
			return e
		}
		e := &graph.EntityNode{UUID: uuid.NewString(), Name: name, GroupID: space.GroupID(), Type: typ,
			Summary: typ + " " + name, CreatedAt: now}
		w.entities[key] = e
		entities = append(entities, e)
		return e
	}
	person := func(space graph.Space, p int) *graph.EntityNode {
		return entity(space, firstNames[p%len(firstNames)]+" "+lastNames[(p/len(firstNames)+p)%len(lastNames)]+fmt.Sprint(p/400), "Person")
	}
	first := w.written[agent]
	people := max(4, (first+n)/4)
	var fs []*graph.Fact
	for i := first; i < first+n; i++ {
		space := graph.DefaultOrg.Private(agent)
		if i%2 == 1 {
			space = graph.DefaultOrg.Public(agent)
		}
		p := person(space, r.Intn(people))
		var target *graph.EntityNode
		var relation, sentence string
		switch k := r.Intn(5); k {
		case 0:
			target = entity(space, orgs[r.Intn(len(orgs))], "Organization")
			relation, sentence = "WORKS_AT", fmt.Sprintf("%s works at %s as a %s.", p.Name, target.Name, roles[r.Intn(len(roles))])
		case 1:
			target = entity(space, cities[r.Intn(len(cities))], "Location")
			relation, sentence = "LIVES_IN", fmt.Sprintf("%s lives in %s.", p.Name, target.Name)
		case 2:
			target = person(space, r.Intn(people))
			relation, sentence = "KNOWS", fmt.Sprintf("%s knows %s from %s.", p.Name, target.Name, cities[r.Intn(len(cities))])
		case 3:
			target = entity(space, pastimes[r.Intn(len(pastimes))], "Topic")
			relation, sentence = "LIKES", fmt.Sprintf("%s enjoys %s on weekends.", p.Name, target.Name)
		default:
			target = entity(space, cities[r.Intn(len(cities))], "Location")
			relation, sentence = "VISITED", fmt.Sprintf("%s visited %s in %d.", p.Name, target.Name, 2015+r.Intn(10))
		}
		valid := now.AddDate(0, -r.Intn(60), 0)
		f := &graph.Fact{UUID: uuid.NewString(), Name: relation, Fact: sentence, SourceUUID: p.UUID,
			TargetUUID: target.UUID, GroupID: space.GroupID(), Episodes: []string{uuid.NewString()}, CreatedAt: now, ValidAt: &valid}
		fs = append(fs, f)
		if watched != nil {
			watched.facts = append(watched.facts, f)
			if len(watched.queries) < 40 {
				watched.queries = append(watched.queries, []string{
					"Where does " + p.Name + " work?", "Who lives in " + target.Name + "?",
					"what does " + p.Name + " do on weekends", p.Name + " " + relation,
				}[len(watched.queries)%4])
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
		if watched != nil && e.Type == "Person" {
			watched.people = append(watched.people, e.UUID)
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
	w.written[agent] += n
	w.total += n
}

// recall is the share of the exact cosine top 10 (computed here over the facts
// generated) that a vector search returns. Facts with the same text tie, so a hit
// scoring at least the tenth exact score counts as one of the ten.
func recall(b *testing.B, c *searchCorpus, emb extract.Embedder, search func(v []float32) ([]graph.FactHit, error)) float64 {
	ctx := context.Background()
	embedding := map[string][]float32{}
	for _, f := range c.facts {
		embedding[f.UUID] = f.FactEmbedding
	}
	total, found := 0, 0
	for _, q := range c.queries {
		v, err := emb.EmbedQuery(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		exact := make([]float64, len(c.facts))
		for i, f := range c.facts {
			exact[i] = cos(v, f.FactEmbedding)
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(exact)))
		hits, err := search(v)
		if err != nil {
			b.Fatal(err)
		}
		good := 0
		for _, h := range hits {
			if cos(v, embedding[h.Fact.UUID]) >= exact[9]-1e-6 {
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

// benchEmbedder is the embedder the hybrid benchmark embeds with: memgate's openai
// embedder when MG_BENCH_EMBEDDER_URL names an OpenAI-compatible endpoint
// (scripts/bench starts scripts/embedder-local, a real sentence model), with
// MG_BENCH_EMBEDDER_MODEL, _DIMENSIONS, _QUERY_PREFIX and _DOCUMENT_PREFIX; else the
// offline hashing embedder.
// The name is the model's, or hashing.
func benchEmbedder(b *testing.B) (emb extract.Embedder, name string, dimensions int) {
	url, model := os.Getenv("MG_BENCH_EMBEDDER_URL"), os.Getenv("MG_BENCH_EMBEDDER_MODEL")
	switch {
	case url == "" && model != "":
		b.Fatal("MG_BENCH_EMBEDDER_MODEL is set without MG_BENCH_EMBEDDER_URL (did the model server start?)")
	case url == "":
		return extract.Hashing{Dimensions: neo4jtest.Dimensions}, "hashing", neo4jtest.Dimensions
	}
	dims, err := strconv.Atoi(os.Getenv("MG_BENCH_EMBEDDER_DIMENSIONS"))
	if err != nil {
		b.Fatalf("MG_BENCH_EMBEDDER_DIMENSIONS: %v", err)
	}
	return extract.NewOpenAI(extract.OpenAIOptions{BaseURL: url, Model: model, Timeout: 5 * time.Minute,
		MaxConcurrency: 1, MaxRetries: 2, Dimensions: dims, Metrics: &extract.Metrics{}, Log: neo4jtest.Logger(b),
		QueryPrefix: os.Getenv("MG_BENCH_EMBEDDER_QUERY_PREFIX"), DocumentPrefix: os.Getenv("MG_BENCH_EMBEDDER_DOCUMENT_PREFIX")}, nil), model, dims
}

// The requesters of the search benchmark: each owns one agent and searches its two
// spaces. small's agent holds 100 facts whatever the corpus's size, middle's 2.5% of
// the corpus, large's half of it; the rest are 100 facts each of other agents.
var searchShapes = []struct {
	name  string
	share float64 // of the corpus; 0: 100 facts
}{{"small", 0}, {"middle", 0.025}, {"large", 0.5}}

// benchSizes are the corpus sizes the search benchmark grows through:
// MG_BENCH_SIZES (comma-separated numbers of facts), else 25,000 to 200,000.
func benchSizes(b *testing.B) []int {
	var sizes []int
	for _, f := range strings.Split(cmp.Or(os.Getenv("MG_BENCH_SIZES"), "25000,50000,100000,200000"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 4000 {
			b.Fatalf("MG_BENCH_SIZES: %q is not a number of facts of at least 4000", f)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// BenchmarkHybridSearch grows one corpus of generated facts through benchSizes and at
// each size measures, for each requester of searchShapes, side by side: the search
// endpoint (POST /v1/memories/search through the HTTP handler, every method fused);
// the context endpoint (POST /v1/agents/{id}/context, the same query and requester,
// max_tokens 1000, the default tokenizer: the same search, then the block laid out);
// its floor, the store calls the endpoint makes and nothing else (the principal, then
// the agent beside the retrieval: one query for a small visible set, else the five
// methods' queries at once); search_small alone (one-query) and the five methods'
// queries at once (each), whichever the set's size makes the service choose; facts by
// text, facts by vector and the graph walk alone; then Graphiti's own search
// (graphiti-core, scripts/graphiti-search) on the same database, groups and query
// embeddings. It also reports the recall@10 of the vector path against exact cosine.
// The search endpoint embeds its query with the embedder, as the service does; the
// rest take the queries embedded beforehand.
func BenchmarkHybridSearch(b *testing.B) {
	emb, embedder, dims := benchEmbedder(b)
	db := neo4jtest.DBWith(b, dims)
	ctx := context.Background()
	version, err := db.ServerVersion(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("Neo4j %s", version)
	w := newWorld(uuid.NewString()[:8])
	requesters := map[string]*searchCorpus{}
	for _, shape := range searchShapes {
		c := w.watch(fmt.Sprintf("sb-%s-%s", w.run, shape.name))
		if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: c.agent, OwnerID: c.owner, CreatedAt: time.Now()}, nil); err != nil {
			b.Fatal(err)
		}
		requesters[shape.name] = c
	}
	for _, size := range benchSizes(b) {
		b.Run(fmt.Sprintf("%dk-%s", size/1000, embedder), func(b *testing.B) {
			start, before := time.Now(), w.total
			for _, shape := range searchShapes {
				agent, want := requesters[shape.name].agent, 100
				if shape.share > 0 {
					want = int(shape.share * float64(size))
				}
				w.grow(b, db, emb, agent, want-w.written[agent])
			}
			for w.total < size { // agents of 100 facts, named by how many facts came before
				w.grow(b, db, emb, fmt.Sprintf("sb-%s-%06d", w.run, w.total), min(100, size-w.total))
			}
			b.Logf("%d facts written in %v: %d in all", w.total-before, time.Since(start).Round(time.Second), w.total)
			settled(b)
			for _, shape := range searchShapes {
				b.Run(shape.name, func(b *testing.B) { measureSearch(b, db, emb, requesters[shape.name]) })
			}
		})
	}
}

// settled waits until the Neo4j process (MG_BENCH_NEO4J_PID, which scripts/bench
// sets) has used less than a tenth of a core over 10 s: after a burst of writes Neo4j
// merges the vector index's segments in the background (one core busy for about a
// minute after 100,000 facts), and search is measured on the settled index. Without
// the pid (a Neo4j elsewhere) it says so and measures at once.
func settled(b *testing.B) {
	pid := os.Getenv("MG_BENCH_NEO4J_PID")
	if pid == "" {
		b.Log("MG_BENCH_NEO4J_PID not set: measuring without waiting for Neo4j's background merges")
		return
	}
	cpu := func() time.Duration { return neo4jCPU(b, pid) }
	start := time.Now()
	for used := cpu(); ; {
		time.Sleep(10 * time.Second) // the window the CPU use is measured over
		now := cpu()
		if now-used < time.Second {
			b.Logf("Neo4j settled after %v", time.Since(start).Round(time.Second))
			return
		}
		used = now
	}
}

// neo4jCPU is the CPU time (user and system) the process pid has used, from /proc.
func neo4jCPU(b *testing.B, pid string) time.Duration {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		b.Fatalf("reading Neo4j's CPU time: %v", err)
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	user, _ := strconv.Atoi(f[11])
	system, _ := strconv.Atoi(f[12])
	return time.Duration(user+system) * 10 * time.Millisecond // clock ticks of 1/100 s
}

// measureSearch measures search by one requester, side by side, then Graphiti's;
func measureSearch(b *testing.B, db *neo4jstore.DB, emb extract.Embedder, c *searchCorpus) {
	ctx := context.Background()
	ring, _ := access.NewKeyring(nil, nil)
	srv := httptest.NewServer(handlers.New(handlers.Deps{
		Log: neo4jtest.Logger(b), Keys: ring, Ready: db, BodyLimit: "1M", HandlerTimeout: 30 * time.Second,
		Service: &service.Service{Auth: access.Policy{AllowPrivate: true}, Dir: db, Mem: db, Find: db, Queue: db,
			Audit: db, Embedder: emb, Log: neo4jtest.Logger(b), Now: time.Now,
			Limits: service.Limits{PageSizeDefault: 10, PageSizeMax: 100}},
	}))
	defer srv.Close()
	vis := graph.Visible{GroupIDs: c.visible}
	vectors := make([][]float32, len(c.queries))
	for i, q := range c.queries {
		v, err := emb.EmbedQuery(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		vectors[i] = v
	}
	i := 0
	next := func() (string, []float32) {
		i++
		return c.queries[i%len(c.queries)], vectors[i%len(c.queries)]
	}
	none := graph.SearchFilter{}
	each := func(q string, v []float32) error { // every method by its own query, at once
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
	}
	variants := []variant{
		{"fused", func() error {
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
		{"context", func() error { // the context endpoint: the same search, then the block laid out
			q, _ := next()
			body, _ := json.Marshal(map[string]any{"query": q, "max_tokens": 1000})
			req, _ := http.NewRequest("POST", srv.URL+"/v1/agents/"+c.agent+"/context", bytes.NewReader(body))
			req.Header.Set("X-Requester-Id", c.owner)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			var out struct {
				Context string
				Tokens  int
				Facts   []string
			}
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if err == nil && (resp.StatusCode != http.StatusOK || len(out.Facts) == 0 || out.Tokens > 1000) {
				err = fmt.Errorf("status %d, %d facts, %d tokens", resp.StatusCode, len(out.Facts), out.Tokens)
			}
			return err
		}},
		{"floor", func() error { // the store calls of fused, in its order
			q, v := next()
			if _, err := db.ResolvePrincipal(ctx, graph.DefaultOrg, c.owner); err != nil {
				return err
			}
			agent := make(chan error, 1)
			go func() { _, err := db.GetAgent(ctx, graph.DefaultOrg, c.agent); agent <- err }()
			small, err := db.SearchSmall(ctx, graph.Retrieval{Text: q, Vector: v, Facts: true, Entities: true, Episodes: true}, vis, none, 10)
			if err == nil && small == nil {
				err = each(q, v)
			}
			return errors.Join(err, <-agent)
		}},
		{"one-query", func() error { // SearchSmall alone: for a large set, the count that declines
			q, v := next()
			_, err := db.SearchSmall(ctx, graph.Retrieval{Text: q, Vector: v, Facts: true, Entities: true, Episodes: true}, vis, none, 10)
			return err
		}},
		{"each", func() error { q, v := next(); return each(q, v) }},
		{"fulltext", func() error {
			q, _ := next()
			_, err := db.FactsByText(ctx, q, vis, none, 10)
			return err
		}},
		{"vector", func() error {
			_, v := next()
			hits, err := db.FactsByVector(ctx, v, vis, none, 10)
			if err == nil && len(hits) == 0 {
				err = fmt.Errorf("no hits")
			}
			return err
		}},
		{"graph", func() error {
			i++
			_, err := db.Walk(ctx, c.people[i%len(c.people)], 2, vis, none, 10)
			return err
		}},
	}
	byVector := func(v []float32) ([]graph.FactHit, error) { return db.FactsByVector(ctx, v, vis, none, 10) }
	sideBySide(b, variants...)
	b.ReportMetric(recall(b, c, emb, byVector), "recall@10")
	b.ReportMetric(float64(len(c.facts)), "visible-facts")
	if b.N > 1 { // Go runs the body once with b.N = 1 before the measured run
		graphitiSearch(b, c, vectors)
	}
}

// graphitiSearch times Graphiti's own search (scripts/graphiti-search: graphiti-core
// from PyPI) over c's spaces with the same queries and embeddings, b.N calls or as
// many as a minute allows (at least 10), and reports its p50 and p99.
func graphitiSearch(b *testing.B, c *searchCorpus, vectors [][]float32) {
	type query struct {
		Text      string    `json:"text"`
		Embedding []float32 `json:"embedding"`
	}
	in := struct {
		GroupIDs []string `json:"group_ids"`
		Queries  []query  `json:"queries"`
		Limit    int      `json:"limit"`
	}{GroupIDs: c.visible, Limit: 10}
	for k, q := range c.queries {
		in.Queries = append(in.Queries, query{q, vectors[k]})
	}
	file := filepath.Join(b.TempDir(), "queries.json")
	body, _ := json.Marshal(in)
	if err := os.WriteFile(file, body, 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(filepath.Join("..", "..", "scripts", "graphiti-search"), "--uri", neo4jtest.URI(b),
		"--queries", file, "--iterations", strconv.Itoa(b.N), "--max-seconds", "60")
	var stderr bytes.Buffer // its log would break the benchmark's result lines
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("graphiti-search: %v\n%s", err, stderr.String())
	}
	var res struct {
		P50   float64 `json:"p50_us"`
		P99   float64 `json:"p99_us"`
		Calls int     `json:"calls"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Calls == 0 {
		b.Fatalf("graphiti-search answered %q: %v", out, err)
	}
	b.ReportMetric(res.P50, "graphiti-p50-µs")
	b.ReportMetric(res.P99, "graphiti-p99-µs")
	b.ReportMetric(float64(res.Calls), "graphiti-calls")
}
