package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// BenchmarkReplicas runs 1, 2 and 4 memgate serve processes (the binary, built once)
// against one Neo4j, each with ingest.workers workers, the scripted LLM answering
// every extraction after a fixed delay as a hosted model would (500 ms), and reports
// episodes/s over the window in which every process runs and the queue holds more
// spaces than the processes have places; duplicate claims (episodes extracted more
// than once, counted at the LLM server, plus episodes done in more than one attempt
// or supported twice in the graph; must be 0); lease conflicts per second
// (memgate_ingest_claim_conflicts_total from each process's /metrics); claims per
// second (episode_claim queries and episodes leased); and the Neo4j process's CPU
// (MG_BENCH_NEO4J_PID, from /proc/<pid>/stat). Then the queue's limit: 4 processes
// with more workers each, and with no LLM delay.
//
// The corpus is written first through one process without workers, then the
// ingesting processes start: four episodes a space (an agent's private space), one
// fact each of distinct relations, so no episode asks the LLM a second question.
// Each arm's corpus is sized so its window lasts about 40 s at the ideal rate
// (replicas × workers / delay), and it has far more spaces than places (a process
// leases up to twice its workers).
func BenchmarkReplicas(b *testing.B) {
	pid := os.Getenv("MG_BENCH_NEO4J_PID")
	if pid == "" {
		b.Log("MG_BENCH_NEO4J_PID is not set: Neo4j's CPU is not measured")
	}
	binary(b)       // once, before any arm's clock
	neo4jtest.DB(b) // the schema, on a fresh database
	// A fresh Neo4j JVM runs the write path many times slower until its JIT has
	// compiled it (BenchmarkPipeline): an untimed corpus first.
	b.Run("warm-up", func(b *testing.B) {
		for range b.N {
			replicaArm(b, pid, 1, 16, 0, 800)
		}
	})
	var one float64 // episodes/s of one process, 500 ms
	for _, c := range []struct {
		delay             time.Duration
		replicas, workers int
	}{
		{500 * time.Millisecond, 1, 8}, {500 * time.Millisecond, 2, 8}, {500 * time.Millisecond, 4, 8},
		// Where the queue stops scaling: more workers each, then no delay at all.
		{500 * time.Millisecond, 4, 16}, {500 * time.Millisecond, 4, 32},
		{0, 1, 16}, {0, 2, 16}, {0, 4, 16},
	} {
		name := fmt.Sprintf("llm-%dms/replicas-%d/workers-%d", c.delay.Milliseconds(), c.replicas, c.workers)
		b.Run(name, func(b *testing.B) {
			episodes := 1600
			if c.delay > 0 {
				ideal := float64(c.replicas*c.workers) / c.delay.Seconds()
				episodes = min(4*int(ideal*40/4), 4000)
			}
			var r replicaResult
			for range b.N {
				r = replicaArm(b, pid, c.replicas, c.workers, c.delay, episodes)
			}
			if c.delay > 0 && c.replicas == 1 && c.workers == 8 {
				one = r.rate
			}
			b.ReportMetric(float64(episodes), "episodes")
			b.ReportMetric(r.rate, "episodes/s")
			if one > 0 && c.delay > 0 {
				b.ReportMetric(r.rate/one, "x-one")
			}
			b.ReportMetric(float64(r.duplicates), "duplicate-claims")
			b.ReportMetric(r.conflicts, "lease-conflicts/s")
			b.ReportMetric(r.claims, "claims/s")
			b.ReportMetric(r.claimed, "claimed/s")
			b.ReportMetric(r.neo4jCPU, "neo4j-cpu-%")
			b.ReportMetric(r.llmBusy, "llm-server-ms/call")
			b.ReportMetric(r.load, "loadavg-1m")
		})
	}
}

// replicaResult is one arm's measurement over its window.
type replicaResult struct {
	rate       float64 // episodes done per second
	duplicates int     // episodes extracted or attempted more than once, or saved twice
	conflicts  float64 // lease conflicts per second, all processes
	claims     float64 // episode_claim queries per second, all processes
	claimed    float64 // episodes leased per second
	neo4jCPU   float64 // % of one core
	llmBusy    float64 // the scripted server's own time per chat call, ms
	load       float64 // the machine's load average (1 minute) at the start
}

// replicaArm writes a corpus of episodes (four a space), runs replicas ingesting
// processes of workers workers on it with the LLM answering after delay, and returns
// what it measured. Everything it stored is forgotten when the benchmark ends.
func replicaArm(b *testing.B, pid string, replicas, workers int, delay time.Duration, episodes int) replicaResult {
	b.Helper()
	b.StopTimer()
	mark := "rep-" + suffix()
	neo4jtest.Forget(b, mark)
	scope := "agent-" + mark + "-"
	llm := llmtest.New()
	defer llm.Close()
	llm.Latency(delay)

	// The corpus, through a process that does not ingest.
	writer, base := startBinary(b, map[string]string{"MEMGATE_INGEST_WORKERS": "0", "MEMGATE_SERVER_RATE_LIMIT": "0"})
	spaces := episodes / 4
	said := []struct{ text, typ, relation string }{
		{"Rep%d knows Pal%d.", "Person", "KNOWS"},
		{"Rep%d works at Firm%d.", "Organization", "WORKS_AT"},
		{"Rep%d lives in Town%d.", "Location", "LIVES_IN"},
		{"Rep%d reports to Boss%d.", "Person", "REPORTS_TO"},
	}
	target := []string{"Pal%d", "Firm%d", "Town%d", "Boss%d"}
	for i := range spaces {
		for k, s := range said {
			text, who, whom := fmt.Sprintf(s.text, i, i), fmt.Sprintf("Rep%d", i), fmt.Sprintf(target[k], i)
			llm.Answer(text, map[string]any{
				"entities": []map[string]any{{"name": who, "type": "Person", "summary": ""}, {"name": whom, "type": s.typ, "summary": ""}},
				"facts": []map[string]any{{"source": who, "target": whom, "relation": s.relation, "fact": text,
					"valid_at": nil, "invalid_at": nil}},
			})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < spaces; i += 8 {
				agent := fmt.Sprintf("%s-%d", mark, i)
				if err := post(base+"/v1/agents", map[string]any{"id": agent}, http.StatusCreated); err != nil {
					errs <- err
					return
				}
				var items []map[string]any
				for _, s := range said {
					items = append(items, map[string]any{"agent_id": agent, "messages": fmt.Sprintf(s.text, i, i)})
				}
				if err := post(base+"/v1/memories/batch", map[string]any{"items": items}, http.StatusOK); err != nil {
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
	writer.stop(b)
	if n := neo4jtest.Count(b, "MATCH (e:Episodic) WHERE e.group_id STARTS WITH $scope AND e.status = 'queued' RETURN count(e)",
		map[string]any{"scope": scope}); n != int64(episodes) {
		b.Fatalf("%d episodes queued, want %d", n, episodes)
	}

	// The ingesting processes; the window opens once every one is ready.
	env := map[string]string{
		"MEMGATE_LLM_BASE_URL": llm.BaseURL(), "MEMGATE_LLM_API_KEY": "test", "MEMGATE_INGEST_SCOPE": scope,
		"MEMGATE_INGEST_WORKERS": strconv.Itoa(workers), "MEMGATE_LLM_MAX_CONCURRENCY": strconv.Itoa(workers),
		"MEMGATE_SERVER_RATE_LIMIT": "0",
	}
	procs := make([]*process, replicas)
	for i := range procs {
		procs[i] = launch(b, env)
	}
	for _, p := range procs {
		waitStatus(b, p.base+"/readyz", http.StatusOK, time.Minute)
	}
	load := loadAverage(b)
	b.StartTimer()
	t0, m0, cpu0 := time.Now(), scrapeAll(b, procs), cpuTicks(b, pid)
	// The window closes while the queue still holds more spaces than the processes
	// have places: when nine in ten episodes have been sent to the LLM (read in
	// process, so waiting puts no load on Neo4j or memgate).
	for llm.ChatCalls.Load() < int64(episodes*9/10) {
		if time.Since(t0) > 10*time.Minute {
			b.Fatalf("%d of %d episodes extracted after 10 minutes", llm.ChatCalls.Load(), episodes)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t1, m1, cpu1 := time.Now(), scrapeAll(b, procs), cpuTicks(b, pid)
	b.StopTimer()
	for deadline := time.Now().Add(5 * time.Minute); scrapeAll(b, procs)["memgate_ingest_processed_total"] < float64(episodes); time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("not every episode done 5 minutes after the window")
		}
	}
	all := scrapeAll(b, procs)
	for _, p := range procs {
		p.stop(b)
	}

	// Every episode extracted once: at the LLM server, one call per episode and no
	// other; in the graph, done in one attempt, and each fact supported by one episode.
	calls := map[string]int{}
	episodeName := regexp.MustCompile(`(Pal|Firm|Town|Boss)\d+`)
	for _, prompt := range llm.Prompts() {
		current := prompt
		if i := strings.Index(prompt, "<current_episode>"); i >= 0 {
			current = prompt[i:]
		}
		calls[episodeName.FindString(current)]++
	}
	duplicates := 0
	for name, n := range calls {
		if name == "" {
			b.Errorf("%d LLM calls for no episode of the corpus", n)
		}
		duplicates += n - 1
	}
	if len(calls) != episodes {
		b.Errorf("%d episodes reached the LLM, want %d", len(calls), episodes)
	}
	params := map[string]any{"scope": scope}
	if n := neo4jtest.Count(b, "MATCH (e:Episodic) WHERE e.group_id STARTS WITH $scope AND e.status = 'done' AND e.attempts = 1 RETURN count(e)", params); n != int64(episodes) {
		b.Errorf("%d episodes done in one attempt, want %d", n, episodes)
		duplicates += episodes - int(n)
	}
	if n := neo4jtest.Count(b, "MATCH ()-[r:RELATES_TO]->() WHERE r.group_id STARTS WITH $scope AND size(r.episodes) = 1 RETURN count(r)", params); n != int64(episodes) {
		b.Errorf("%d facts supported by one episode each, want %d (one per episode)", n, episodes)
	}
	if d := all["memgate_ingest_leases_lost_total"]; d > 0 {
		b.Errorf("%v leases lost", d)
	}
	if duplicates > 0 {
		b.Errorf("%d duplicate claims", duplicates)
	}
	window := t1.Sub(t0).Seconds()
	per := func(name string) float64 { return (m1[name] - m0[name]) / window }
	r := replicaResult{rate: per("memgate_ingest_processed_total"), duplicates: duplicates,
		conflicts: per("memgate_ingest_claim_conflicts_total"), claims: per(`memgate_neo4j_queries_total{query="episode_claim"}`),
		claimed: per("memgate_ingest_claimed_total"), load: load,
		llmBusy: float64(llm.Busy.Load()) / float64(max(llm.ChatCalls.Load(), 1)) / 1e6}
	if cpu0 >= 0 && cpu1 >= 0 {
		r.neo4jCPU = float64(cpu1-cpu0) / clockTicks / window * 100
	}
	b.Logf("%d replicas × %d workers, LLM %v, %d episodes: window %.1f s, %.1f episodes/s; in all %v conflicts, %v claims; claim %.1f ms avg",
		replicas, workers, delay, episodes, window, r.rate, all["memgate_ingest_claim_conflicts_total"],
		all[`memgate_neo4j_queries_total{query="episode_claim"}`],
		all[`memgate_neo4j_query_seconds_total{query="episode_claim"}`]/all[`memgate_neo4j_queries_total{query="episode_claim"}`]*1000)
	return r
}

// post sends body as JSON and wants status.
func post(url string, body any, status int) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("X-Requester-Id", "alice")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var answer bytes.Buffer
	_, _ = answer.ReadFrom(resp.Body)
	if resp.StatusCode != status {
		return fmt.Errorf("POST %s: %d %s, want %d", url, resp.StatusCode, answer.String(), status)
	}
	if strings.Contains(answer.String(), `"error"`) {
		return fmt.Errorf("POST %s: %s", url, answer.String())
	}
	return nil
}

// scrapeAll sums the processes' unlabelled and query-labelled /metrics samples.
func scrapeAll(b *testing.B, procs []*process) map[string]float64 {
	b.Helper()
	sum := map[string]float64{}
	for _, p := range procs {
		resp, err := http.Get(p.base + "/metrics")
		if err != nil {
			b.Fatal(err)
		}
		scanner := bufio.NewScanner(resp.Body)
		scanner.Buffer(make([]byte, 64<<10), 1<<20)
		for scanner.Scan() {
			line := scanner.Text()
			if !strings.HasPrefix(line, "memgate_") {
				continue
			}
			i := strings.LastIndexByte(line, ' ')
			v, err := strconv.ParseFloat(line[i+1:], 64)
			if err == nil {
				sum[line[:i]] += v
			}
		}
		resp.Body.Close()
	}
	return sum
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times (100 on
// every Linux memgate is benchmarked on).
const clockTicks = 100

// cpuTicks is the user and system time of process pid so far, in clock ticks; -1
// without a pid.
func cpuTicks(b *testing.B, pid string) int64 {
	b.Helper()
	if pid == "" {
		return -1
	}
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		b.Fatalf("reading Neo4j's CPU time: %v", err)
	}
	// The fields after the command's closing parenthesis; utime and stime are the
	// 14th and 15th of the whole line.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime
}

// loadAverage is the machine's one-minute load average.
func loadAverage(b *testing.B) float64 {
	b.Helper()
	s, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		b.Fatal(err)
	}
	v, _ := strconv.ParseFloat(strings.Fields(string(s))[0], 64)
	return v
}
