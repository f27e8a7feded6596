package extract_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
)

// BenchmarkPipeline ingests a corpus (spaces of 4 episodes, each a conversation line
// naming two people, scripted as one fact) through the OpenAI path against the
// scripted server, and reports episodes per second over all its runs and LLM calls
// per episode. The zero-latency corpus has 1,000 episodes, so one run lasts long
// enough for a stable rate; the corpora with 300 ms LLM latency have 200.
func BenchmarkPipeline(b *testing.B) {
	// Untimed corpora for 15 s first: a fresh Neo4j JVM runs the write path several
	// times slower until its JIT has seen it.
	b.Run("warm-up", func(b *testing.B) {
		for start := time.Now(); time.Since(start) < 15*time.Second; {
			benchPipeline(b, 0, 16, 200)
		}
	})
	for _, c := range []struct {
		latency           time.Duration
		workers, episodes int
	}{{0, 16, 1000}, {300 * time.Millisecond, 1, 200}, {300 * time.Millisecond, 4, 200}, {300 * time.Millisecond, 16, 200}} {
		b.Run(fmt.Sprintf("llm-%dms/workers-%d", c.latency.Milliseconds(), c.workers), func(b *testing.B) {
			var episodes int
			var took time.Duration
			for i := 0; i < b.N; i++ {
				took += benchPipeline(b, c.latency, c.workers, c.episodes)
				episodes += c.episodes
			}
			b.ReportMetric(float64(episodes)/took.Seconds(), "episodes/s")
		})
	}
}

// benchPipeline ingests one corpus and returns how long the runner took.
func benchPipeline(b *testing.B, latency time.Duration, workers, episodes int) time.Duration {
	b.StopTimer()
	p := newPipe(b)
	p.llm.Latency(latency)
	p.opts.MaxConcurrency = workers // llm.max_concurrency set to match: the LLM is not the limit here
	const perSpace = 4
	var eps []*graph.Episode
	for i := 0; i < episodes; i++ {
		text := p.llm.Knows(fmt.Sprintf("Person%d", i), fmt.Sprintf("Friend%d", i))
		eps = append(eps, p.add(p.space(fmt.Sprint(i%(episodes/perSpace))), "user: "+text))
	}
	b.StartTimer()
	start := time.Now()
	cancel := p.start(p.runner(workers, 3))
	// The clock stops when the runner has finished every episode: its own counters,
	// read in process, so measuring puts no load on Neo4j. Each episode's stored
	// status is checked afterwards.
	for p.metric.Processed.Load()+p.metric.Failed.Load() < int64(len(eps)) {
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("%d of %d episodes finished after 10 minutes", p.metric.Processed.Load(), len(eps))
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	got := p.wait(eps, time.Minute)
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
	b.ReportMetric(float64(p.llm.ChatCalls.Load())/float64(len(eps)), "llm-calls/episode")
	b.ReportMetric(float64(p.llm.EmbeddingCalls.Load())/float64(len(eps)), "embedding-calls/episode")
	return elapsed
}
