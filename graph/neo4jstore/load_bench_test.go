package neo4jstore_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
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

// The load of BenchmarkSearchUnderWrites: writers posting memories without pause
// beside searchers, as the reliability tier's load test has them.
const (
	loadWriters   = 50
	loadSearchers = 4
	// loadPoolSize is the service's default neo4j.max_pool_size (config), which the
	// writers and the searchers share as they do in memgate serve.
	loadPoolSize = 50
)

// BenchmarkSearchUnderWrites measures search while others write. It grows the search
// benchmark's corpus (BenchmarkHybridSearch's generator and requesters: small, middle
// and large) to MG_BENCH_LOAD_SIZE facts (default 50,000), then, through one HTTP
// server as memgate serve wires it (one store, the service's default pool), has 4
// searchers call POST /v1/memories/search in turn for the three requesters, b.N
// searches, first with nothing else running (idle), then while 50 writers post
// single memories to agents of their own without pause (POST /v1/memories, each with
// an Idempotency-Key; no ingestion worker runs): twice in that order, so both meet
// the same database and machine. It reports the searches' p50 and p99 idle and under
// the writes, overall and per requester, and the writes' rate and latency.
func BenchmarkSearchUnderWrites(b *testing.B) {
	emb, embedder, dims := benchEmbedder(b)
	neo4jtest.DBWith(b, dims) // migrated
	opts := neo4jtest.Options(b)
	opts.MaxPoolSize = loadPoolSize
	db, err := neo4jstore.Open(opts, neo4jtest.Logger(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = db.Close(ctx)
	})
	size, err := strconv.Atoi(cmp.Or(os.Getenv("MG_BENCH_LOAD_SIZE"), "50000"))
	if err != nil || size < 4000 {
		b.Fatalf("MG_BENCH_LOAD_SIZE: %q is not a number of facts of at least 4000", os.Getenv("MG_BENCH_LOAD_SIZE"))
	}
	ctx := context.Background()
	w := newWorld(uuid.NewString()[:8])
	neo4jtest.Forget(b, w.run)
	var requesters []*searchCorpus
	for _, shape := range searchShapes {
		c := w.watch(fmt.Sprintf("sb-%s-%s", w.run, shape.name))
		if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: c.agent, OwnerID: c.owner, CreatedAt: time.Now()}, nil); err != nil {
			b.Fatal(err)
		}
		requesters = append(requesters, c)
	}
	writer := "sw-owner-" + w.run
	agents := make([]string, loadWriters)
	for i := range agents {
		agents[i] = fmt.Sprintf("sw-%s-%02d", w.run, i)
		if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: agents[i], OwnerID: writer, CreatedAt: time.Now()}, nil); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	for k, shape := range searchShapes {
		want := 100
		if shape.share > 0 {
			want = int(shape.share * float64(size))
		}
		w.grow(b, db, emb, requesters[k].agent, want)
	}
	for w.total < size {
		w.grow(b, db, emb, fmt.Sprintf("sb-%s-%06d", w.run, w.total), min(100, size-w.total))
	}
	b.Logf("%d facts written in %v", w.total, time.Since(start).Round(time.Second))
	settled(b)

	ring, _ := access.NewKeyring(nil, nil)
	srv := httptest.NewServer(handlers.New(handlers.Deps{
		Log: neo4jtest.Logger(b), Keys: ring, Ready: db, Consistency: db, BodyLimit: "1M", HandlerTimeout: 30 * time.Second,
		Service: &service.Service{Auth: access.Policy{AllowPrivate: true}, Dir: db, Mem: db, Find: db, Queue: db,
			Audit: db, Embedder: emb, Log: neo4jtest.Logger(b), Now: time.Now,
			Limits: service.Limits{DefaultVisibility: "private", RefuseCredentials: true, MaxContentBytes: 256 << 10,
				BatchMaxItems: 10, PageSizeDefault: 10, PageSizeMax: 100}},
	}))
	defer srv.Close()
	// Clients keep their connections, as an agent's HTTP client does (the default
	// transport keeps two per host and would open a new one for most requests).
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadWriters + loadSearchers}}
	defer client.CloseIdleConnections()
	post := func(path, requester string, body any, key bool) (*http.Response, []byte, error) {
		in, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewReader(in))
		req.Header.Set("X-Requester-Id", requester)
		if key {
			req.Header.Set("Idempotency-Key", uuid.NewString())
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, nil, err
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, out, err
	}
	var searches atomic.Int64
	search := func() (shape int, err error) {
		n := searches.Add(1)
		shape = int(n % int64(len(requesters)))
		c := requesters[shape]
		q := c.queries[int(n/int64(len(requesters)))%len(c.queries)]
		resp, out, err := post("/v1/memories/search", c.owner, map[string]any{"agent_id": c.agent, "query": q, "limit": 10}, false)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("search: status %d: %s", resp.StatusCode, out)
		}
		return shape, err
	}
	var written atomic.Int64
	write := func(agent string) error {
		n := written.Add(1)
		resp, out, err := post("/v1/memories", writer, map[string]any{"agent_id": agent, "messages": fmt.Sprintf(
			"user: I moved to Lisbon in March %d and started at Northwind as a data engineer; "+
				"my manager is Erik Lund and we meet on Mondays. assistant: Noted, thanks. (%d)", 2000+n%25, n)}, true)
		if err == nil && resp.StatusCode != http.StatusAccepted {
			err = fmt.Errorf("write: status %d: %s", resp.StatusCode, out)
		}
		return err
	}

	b.Run(fmt.Sprintf("%dk-%s", size/1000, embedder), func(b *testing.B) {
		if b.N == 1 { // Go's first run of the body, before the measured one
			_, err := search()
			if err == nil {
				err = write(agents[0])
			}
			if err != nil {
				b.Fatal(err)
			}
			return
		}
		// Both warm up together for 10 s first: a fresh Neo4j JVM answers several times slower.
		load := startWriters(b, agents, write)
		searchFor(b, 10*time.Second, search)
		load.stop(b)
		idle, loaded := make([][]time.Duration, len(requesters)), make([][]time.Duration, len(requesters))
		var writes []time.Duration
		loadavg := func() float64 { // the machine's, over the last minute
			s, _ := os.ReadFile("/proc/loadavg")
			var v float64
			_, _ = fmt.Sscan(string(s), &v)
			return v
		}
		before := loadavg()
		b.ResetTimer()
		// Neo4j's CPU time over each phase, when scripts/bench names its process.
		pid := os.Getenv("MG_BENCH_NEO4J_PID")
		var cpu [2]struct{ used, took time.Duration }
		// Each query's calls and time in each phase, from the store's counters.
		type stat struct{ calls, nanos int64 }
		queries := [2]map[string]stat{{}, {}}
		stats := func(into map[string]stat, sign int64) {
			db.QueryStats(func(name string, s *neo4jstore.QueryStat) {
				q := into[name]
				into[name] = stat{q.calls + sign*s.Count.Load(), q.nanos + sign*s.Nanos.Load()}
			})
		}
		phase := func(k int, run func()) {
			var used time.Duration
			if pid != "" {
				used = neo4jCPU(b, pid)
			}
			stats(queries[k], -1)
			t := time.Now()
			run()
			cpu[k].took += time.Since(t)
			stats(queries[k], 1)
			if pid != "" {
				cpu[k].used += neo4jCPU(b, pid) - used
			}
		}
		for round := 0; round < 2; round++ {
			n := b.N / 2
			phase(0, func() { measure(b, n, search, idle) })
			load := startWriters(b, agents, write)
			// The writers under way: each of them has had a write answered, on average.
			for deadline := time.Now().Add(time.Minute); len(load.took()) < len(agents); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatalf("%d writes answered a minute after the writers started", len(load.took()))
				}
			}
			from := len(load.took())
			phase(1, func() { measure(b, n, search, loaded) })
			writes = append(writes, load.took()[from:]...)
			load.stop(b)
		}
		wrote := cpu[1].took
		b.StopTimer()
		names := make([]string, 0, len(queries[1]))
		for name, q := range queries[1] {
			if q.calls > 0 {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names { // where the searches' time went, query by query
			i, l := queries[0][name], queries[1][name]
			mean := func(q stat) float64 { return float64(q.nanos) / float64(max(q.calls, 1)) / 1e6 }
			b.Logf("%-28s idle %6d calls, mean %8.1f ms; under the writes %6d calls, mean %8.1f ms", name, i.calls, mean(i), l.calls, mean(l))
		}
		all := func(ds [][]time.Duration) []time.Duration {
			var out []time.Duration
			for _, d := range ds {
				out = append(out, d...)
			}
			return out
		}
		i50, i99 := percentiles(all(idle))
		l50, l99 := percentiles(all(loaded))
		report := func(name string, d time.Duration) { b.ReportMetric(float64(d.Microseconds()), name+"-µs") }
		report("idle-p50", i50)
		report("idle-p99", i99)
		report("loaded-p50", l50)
		report("loaded-p99", l99)
		b.ReportMetric(float64(l99)/float64(i99), "p99-x-idle")
		b.ReportMetric(float64(l50)/float64(i50), "p50-x-idle")
		for k, shape := range searchShapes {
			i50, i99 := percentiles(idle[k])
			l50, l99 := percentiles(loaded[k])
			report(shape.name+"-idle-p50", i50)
			report(shape.name+"-idle-p99", i99)
			report(shape.name+"-loaded-p50", l50)
			report(shape.name+"-loaded-p99", l99)
		}
		w50, w99 := percentiles(writes)
		report("write-p50", w50)
		report("write-p99", w99)
		b.ReportMetric(float64(len(writes))/wrote.Seconds(), "writes/s")
		b.ReportMetric((before+loadavg())/2, "loadavg-1m")
		if pid != "" {
			b.ReportMetric(100*cpu[0].used.Seconds()/cpu[0].took.Seconds(), "neo4j-cpu-%-idle")
			b.ReportMetric(100*cpu[1].used.Seconds()/cpu[1].took.Seconds(), "neo4j-cpu-%-loaded")
		}
	})
}

// measure has the searchers make n searches in all and adds each one's time to
// into, by requester.
func measure(b *testing.B, n int, search func() (int, error), into [][]time.Duration) {
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		left atomic.Int64
		errs []error
	)
	left.Store(int64(n))
	for range loadSearchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				t := time.Now()
				shape, err := search()
				d := time.Since(t)
				mu.Lock()
				into[shape] = append(into[shape], d)
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		b.Fatalf("%d of %d searches failed, first: %v", len(errs), n, errs[0])
	}
}

// searchFor has the searchers search until d has passed.
func searchFor(b *testing.B, d time.Duration, search func() (int, error)) {
	var wg sync.WaitGroup
	errs := make(chan error, loadSearchers)
	for range loadSearchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := time.Now(); time.Since(t) < d; {
				if _, err := search(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// writeLoad is writers writing without pause until stopped.
type writeLoad struct {
	done  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	times []time.Duration
	errs  []error
}

// startWriters starts one writer per agent, each calling write for its agent again
// and again.
func startWriters(b *testing.B, agents []string, write func(agent string) error) *writeLoad {
	l := &writeLoad{done: make(chan struct{})}
	for _, agent := range agents {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.done:
					return
				default:
				}
				t := time.Now()
				err := write(agent)
				d := time.Since(t)
				l.mu.Lock()
				l.times = append(l.times, d)
				if err != nil {
					l.errs = append(l.errs, err)
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// took is the writes' times so far.
func (l *writeLoad) took() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Duration(nil), l.times...)
}

// stop stops the writers and waits for the writes under way; a failed write fails b.
func (l *writeLoad) stop(b *testing.B) {
	close(l.done)
	l.wg.Wait()
	if len(l.errs) > 0 {
		b.Fatalf("%d of %d writes failed, first: %v", len(l.errs), len(l.times), l.errs[0])
	}
}

// percentiles returns the p50 and p99 of ds (sorting it).
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*99/100]
}
