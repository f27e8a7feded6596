package extract_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
)

// BenchmarkPipeline ingests a corpus of 200 episodes (50 spaces of 4, each a
// conversation line naming two people, scripted as one fact) through the OpenAI path
// against the scripted server, and reports episodes per second and LLM calls per
// episode. Each run is one full corpus; run it with -benchtime 1x.
func BenchmarkPipeline(b *testing.B) {
	// Untimed corpora for 15 s first: a fresh Neo4j JVM runs the write path several
	// times slower until its JIT has seen it.
	b.Run("warm-up", func(b *testing.B) {
		for start := time.Now(); time.Since(start) < 15*time.Second; {
			benchPipeline(b, 0, 16)
		}
	})
	for _, c := range []struct {
		latency time.Duration
		workers int
	}{{0, 16}, {300 * time.Millisecond, 1}, {300 * time.Millisecond, 4}, {300 * time.Millisecond, 16}} {
		b.Run(fmt.Sprintf("llm-%dms/workers-%d", c.latency.Milliseconds(), c.workers), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchPipeline(b, c.latency, c.workers)
			}
		})
	}
}

func benchPipeline(b *testing.B, latency time.Duration, workers int) {
	b.StopTimer()
	p := newPipe(b)
	p.llm.Latency(latency)
	p.opts.MaxConcurrency = workers // llm.max_concurrency set to match: the LLM is not the limit here
	const spaces, perSpace = 50, 4
	var eps []*graph.Episode
	for i := 0; i < spaces*perSpace; i++ {
		text := p.llm.Knows(fmt.Sprintf("Person%d", i), fmt.Sprintf("Friend%d", i))
		eps = append(eps, p.add(p.space(fmt.Sprint(i%spaces)), "user: "+text))
	}
	b.StartTimer()
	start := time.Now()
	cancel := p.start(p.runner(workers, 3))
	got := p.wait(eps, 10*time.Minute)
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	for _, e := range got {
		if e.Status != graph.StatusDone {
			b.Fatalf("%s: %s (%s)", e.UUID, e.Status, e.LastError)
		}
	}
	p.db.QueryStats(func(name string, s *neo4jstore.QueryStat) {
		if n := s.Count.Load(); n > 0 {
			b.Logf("%-28s %6d calls %8.2f ms avg", name, n, float64(s.Nanos.Load())/float64(n)/1e6)
		}
	})
	b.ReportMetric(float64(len(eps))/elapsed.Seconds(), "episodes/s")
	b.ReportMetric(float64(p.llm.ChatCalls.Load())/float64(len(eps)), "llm-calls/episode")
	b.ReportMetric(float64(p.llm.EmbeddingCalls.Load())/float64(len(eps)), "embedding-calls/episode")
}
