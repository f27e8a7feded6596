package neo4jstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/handlers"
	"github.com/memgate/memgate/service"
)

// BenchmarkWrites measures the write path with the service's default limits
// (credentials refused, 10 memories a batch): memories accepted per second, and each
// request's p50 and p99, through POST /v1/memories at 1, 10 and 50 concurrent writers
// (each its own agent, every request with an Idempotency-Key, as the client sends),
// and through POST /v1/memories/batch with 10 memories a request; then, side by side
// one at a time, what one write is made of: the store's write transaction alone (the
// floor the targets compare with), the principal, the agent look-up and the
// idempotency look-up. No ingestion worker runs: the memories stay queued.
func BenchmarkWrites(b *testing.B) {
	db := neo4jtest.DB(b)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	owner := "wb-owner-" + run
	agents := make([]string, 50)
	for i := range agents {
		agents[i] = fmt.Sprintf("wb-%s-%02d", run, i)
		if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: agents[i], OwnerID: owner, CreatedAt: time.Now()}, nil); err != nil {
			b.Fatal(err)
		}
	}
	ring, _ := access.NewKeyring(nil, nil)
	srv := httptest.NewServer(handlers.New(handlers.Deps{
		Log: neo4jtest.Logger(b), Keys: ring, Ready: db, Consistency: db, BodyLimit: "1M", HandlerTimeout: 30 * time.Second,
		Service: &service.Service{Auth: access.Policy{AllowPrivate: true}, Dir: db, Mem: db, Find: db, Queue: db,
			Audit: db, Log: neo4jtest.Logger(b), Now: time.Now,
			Limits: service.Limits{DefaultVisibility: "private", RefuseCredentials: true, MaxContentBytes: 256 << 10,
				BatchMaxItems: 10, PageSizeDefault: 20, PageSizeMax: 100}},
	}))
	defer srv.Close()
	// Sentences of a conversation about 200 bytes long, different in every memory.
	text := func(n int) string {
		return fmt.Sprintf("user: I moved to Lisbon in March %d and started at Northwind as a data engineer; "+
			"my manager is Erik Lund and we meet on Mondays. assistant: Noted, thanks. (%s)", 2000+n%25, uuid.NewString())
	}
	post := func(path string, body any) error {
		in, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewReader(in))
		req.Header.Set("X-Requester-Id", owner)
		req.Header.Set("Idempotency-Key", uuid.NewString())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var out struct {
			Results []struct{ Error any }
		}
		var raw bytes.Buffer
		_, _ = raw.ReadFrom(resp.Body)
		_ = json.Unmarshal(raw.Bytes(), &out)
		for _, r := range out.Results {
			if r.Error != nil {
				resp.StatusCode = 0 // a batch answers 200 with each item's error
			}
		}
		if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: status %d: %s", path, resp.StatusCode, raw.String())
		}
		return nil
	}
	writes := []struct {
		name      string
		memories  int // a request carries
		write     func(agent string, n int) error
		writersAt []int
	}{
		{"single", 1, func(agent string, n int) error {
			return post("/v1/memories", map[string]any{"agent_id": agent, "messages": text(n)})
		}, []int{1, 10, 50}},
		{"batch", 10, func(agent string, n int) error {
			items := make([]map[string]any, 10)
			for i := range items {
				items[i] = map[string]any{"agent_id": agent, "messages": text(n*10 + i)}
			}
			return post("/v1/memories/batch", map[string]any{"items": items})
		}, []int{1, 10, 50}},
	}
	for _, w := range writes {
		for _, writers := range w.writersAt {
			b.Run(fmt.Sprintf("%s/writers-%d", w.name, writers), func(b *testing.B) {
				concurrently(b, writers, w.memories, func(writer, n int) error { return w.write(agents[writer], n) }, queryCounts(db))
			})
		}
	}
	b.Run("parts", func(b *testing.B) {
		i := 0
		episode := func() *graph.Episode {
			i++
			now := time.Now().UTC()
			space := graph.DefaultOrg.Private(agents[i%len(agents)])
			return &graph.Episode{UUID: uuid.NewString(), GroupID: space.GroupID(), AgentID: space.Agent,
				Source: graph.SourceText, Content: text(i), CreatedAt: now, ValidAt: now, Status: graph.StatusQueued,
				Name: "bench", RequesterID: owner, Version: 1, IdempotencyKey: uuid.NewString(), RequestHash: "bench"}
		}
		sideBySide(b,
			variant{"transaction", func() error { return db.CreateEpisodes(ctx, []*graph.Episode{episode()})[0].Err }},
			variant{"principal", func() error { _, err := db.ResolvePrincipal(ctx, graph.DefaultOrg, owner); return err }},
			variant{"agent", func() error { _, err := db.GetAgent(ctx, graph.DefaultOrg, agents[0]); return err }},
			variant{"idempotency", func() error { _, _, err := db.ByIdempotencyKey(ctx, episode()); return err }},
		)
	})
}

// queryCounts returns a function that reads how often each named query of db has run.
func queryCounts(db *neo4jstore.DB) func() map[string]int64 {
	return func() map[string]int64 {
		out := map[string]int64{}
		db.QueryStats(func(name string, s *neo4jstore.QueryStat) { out[name] = s.Count.Load() })
		return out
	}
}

// concurrently runs b.N requests of write over writers goroutines (writer w makes
// requests w, w+writers, ...) and reports each request's p50 and p99 in microseconds,
// the memories accepted per second (memories a request carries) and, when counts is
// given, how many times each named query ran per request (a group commit's
// episode_create once for its group: the inverse of the mean group size).
func concurrently(b *testing.B, writers, memories int, write func(writer, n int) error, counts ...func() map[string]int64) {
	for warm := time.Now(); time.Since(warm) < 5*time.Second; { // the JIT and the pool
		if err := write(0, 0); err != nil {
			b.Fatal(err)
		}
	}
	var (
		mu   sync.Mutex
		took []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	var before map[string]int64
	if len(counts) > 0 {
		before = counts[0]()
	}
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := w; n < b.N; n += writers {
				t := time.Now()
				err := write(w, n)
				mu.Lock()
				took = append(took, time.Since(t))
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if len(errs) > 0 {
		b.Fatalf("%d of %d requests failed, first: %v", len(errs), b.N, errs[0])
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(b.N*memories)/elapsed.Seconds(), "memories/s")
	if len(counts) > 0 {
		for name, n := range counts[0]() {
			if d := n - before[name]; d > 0 {
				b.ReportMetric(float64(d)/float64(b.N), name+"/req")
			}
		}
	}
}
