package extract_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
	"github.com/memgate/memgate/webhook"
)

// BenchmarkWebhookOverhead: the pipeline's episodes/s with webhooks off and on, side by
// side in one run, alternating off and on so that both meet the same machine. On, every
// agent (one per space) has one webhook following every memory event, and a deliverer
// with the default settings (webhooks.workers 4, poll 500 ms) sends them to a receiver in
// the process while the pipeline runs: the outbox rows written with each save, and the
// claims, checks (the subscriber's principal resolved, the Authorizer asked) and posts of
// the deliveries, all share Neo4j and the CPU with ingestion. A warm-up corpus first (the
// JVM's JIT, see BenchmarkPipeline). MG_BENCH_WEBHOOK_EPISODES (default 1000) and
// MG_BENCH_WEBHOOK_ROUNDS (default 3) size it; 16 workers; no LLM latency, the worst
// case, unless MG_BENCH_WEBHOOK_LATENCY (a duration: 300ms) has the scripted LLM answer
// after it, as a hosted model would; MG_BENCH_WEBHOOK_OUTBOX_ONLY=1 measures the
// outbox's writes without a deliverer.
//
// Beside the rates it reports the CPU time each corpus took, per episode, from its
// set-up to its last delivery: this process's (pipeline, deliverer and receiver) and,
// when MG_BENCH_NEO4J_PID names the Neo4j process, Neo4j's. On a machine shared with
// other work the rates follow the others' load too; the CPU time a corpus takes much
// less so, and on minus off is what the deliveries cost.
func BenchmarkWebhookOverhead(b *testing.B) {
	episodes, rounds := envInt("MG_BENCH_WEBHOOK_EPISODES", 1000), envInt("MG_BENCH_WEBHOOK_ROUNDS", 3)
	latency, err := time.ParseDuration(cmp.Or(os.Getenv("MG_BENCH_WEBHOOK_LATENCY"), "0s"))
	if err != nil {
		b.Fatalf("MG_BENCH_WEBHOOK_LATENCY: %v", err)
	}
	for start := time.Now(); time.Since(start) < time.Minute; {
		b.Logf("warm-up corpus: %.0f episodes/s", 200/benchPipeline(b, 0, 16, 200).Seconds())
	}
	var off, on time.Duration
	var delivered, drain int64
	var offCPU, onCPU, offDB, onDB time.Duration
	for r := 0; r < rounds; r++ {
		cpu, db := cpuTimes(b)
		took := benchPipeline(b, latency, 16, episodes)
		off += took
		cpu2, db2 := cpuTimes(b)
		offCPU, offDB = offCPU+cpu2-cpu, offDB+db2-db
		cpu, db = cpu2, db2
		b.Logf("round %d, webhooks off: %.1f episodes/s", r+1, float64(episodes)/took.Seconds())
		var hooks *hooked
		took = benchPipelineWith(b, latency, 16, episodes, func(p *pipe) { hooks = subscribeAll(b, p) })
		on += took
		// Every delivery of the run arrives: memory.done of each episode, to its agent's
		// webhook (the deliverer keeps sending after the runner stopped; the wait is
		// reported as the drain).
		waited := time.Now()
		for !outboxOnly() && hooks.received.Load() < int64(episodes) {
			if time.Since(waited) > 5*time.Minute {
				b.Fatalf("%d of %d deliveries after 5 minutes", hooks.received.Load(), episodes)
			}
			time.Sleep(10 * time.Millisecond)
		}
		delivered += hooks.received.Load()
		drain += time.Since(waited).Milliseconds()
		hooks.stop()
		cpu2, db2 = cpuTimes(b)
		onCPU, onDB = onCPU+cpu2-cpu, onDB+db2-db
		b.Logf("round %d, webhooks on: %.1f episodes/s; %d deliveries, the last %d ms after the pipeline ended",
			r+1, float64(episodes)/took.Seconds(), hooks.received.Load(), time.Since(waited).Milliseconds())
	}
	total := float64(episodes * rounds)
	b.ReportMetric(total/off.Seconds(), "off-episodes/s")
	b.ReportMetric(total/on.Seconds(), "on-episodes/s")
	b.ReportMetric(off.Seconds()/on.Seconds(), "on/off")
	b.ReportMetric(float64(delivered)/total, "deliveries/episode")
	b.ReportMetric(float64(drain)/float64(rounds), "drain-ms")
	perEpisode := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / total }
	b.ReportMetric(perEpisode(offCPU), "off-cpu-ms/episode")
	b.ReportMetric(perEpisode(onCPU), "on-cpu-ms/episode")
	if offDB > 0 {
		b.ReportMetric(perEpisode(offDB), "off-neo4j-cpu-ms/episode")
		b.ReportMetric(perEpisode(onDB), "on-neo4j-cpu-ms/episode")
	}
}

// cpuTimes returns the CPU time (user and system) this process has used, and the
// Neo4j process MG_BENCH_NEO4J_PID names (0 without one).
func cpuTimes(b *testing.B) (self, neo4j time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	pid := os.Getenv("MG_BENCH_NEO4J_PID")
	if pid == "" {
		return self, 0
	}
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// After the command's closing parenthesis: state is field 3, utime 14, stime 15,
	// in clock ticks (100 a second on Linux).
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	var utime, stime int64
	if _, err := fmt.Sscan(fields[11]+" "+fields[12], &utime, &stime); err != nil {
		b.Fatal(err)
	}
	return self, time.Duration(utime+stime) * 10 * time.Millisecond
}

// hooked is the webhooks of one corpus: the count of verified-enough deliveries (a
// webhook-id and a signature) and the deliverer's stop.
type hooked struct {
	received atomic.Int64
	stop     func()
}

// subscribeAll registers one webhook per agent of p, following every memory event, to
// a receiver in the process, and starts a deliverer with the default settings.
func subscribeAll(b *testing.B, p *pipe) *hooked {
	h := &hooked{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("webhook-id") != "" && r.Header.Get("webhook-signature") != "" {
			h.received.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	owner := "owner-" + p.scope
	for agent := range p.agents {
		w := &graph.Webhook{Org: graph.DefaultOrg, ID: uuid.NewString(), URL: srv.URL + "/" + agent, Events: graph.MemoryEvents,
			Agent: agent, Requester: owner, HostKey: "bench", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			GroupIDs:  []string{graph.DefaultOrg.Private(agent).GroupID(), graph.DefaultOrg.Public(agent).GroupID()},
			CreatedAt: time.Now()}
		if err := p.db.CreateWebhook(context.Background(), w, graph.WebhookLimits{PerRequester: len(p.agents), PerTarget: 1}); err != nil {
			b.Fatal(err)
		}
	}
	if outboxOnly() {
		h.stop = srv.Close
		return h
	}
	svc := &service.Service{Auth: access.Policy{AllowPrivate: true}, Dir: p.db, Mem: p.db, Hooks: p.db, Log: neo4jtest.Logger(b), Now: time.Now,
		Hosts: benchHost{}}
	d := &webhook.Deliverer{Store: p.db, Service: svc, Guard: webhook.Guard{AllowLoopback: true}, Log: neo4jtest.Logger(b),
		Workers: 4, Timeout: 10 * time.Second, Poll: 500 * time.Millisecond, BackoffMin: 5 * time.Second, BackoffMax: time.Hour,
		Horizon: 24 * time.Hour, Scope: owner}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	h.stop = func() { cancel(); <-done; srv.Close() }
	return h
}

// outboxOnly (MG_BENCH_WEBHOOK_OUTBOX_ONLY=1) runs no deliverer: the cost of writing
// the outbox alone.
func outboxOnly() bool { return os.Getenv("MG_BENCH_WEBHOOK_OUTBOX_ONLY") == "1" }

func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err != nil || n <= 0 {
		return def
	}
	return n
}

// benchHost is the one host key the benchmark's webhooks were registered with.
type benchHost struct{}

func (benchHost) Host(name string) (access.Host, bool) {
	return access.Host{Name: name, Trusted: true, Requesters: []string{"*"}}, name == "bench"
}
