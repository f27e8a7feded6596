package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// apiClient talks to a running memgate in dev mode as one requester.
type apiClient struct {
	t         testing.TB
	base      string
	requester string
}

func (c apiClient) call(method, path string, body any, into any) int {
	c.t.Helper()
	var buf bytes.Buffer
	if body != nil {
		_ = json.NewEncoder(&buf).Encode(body)
	}
	req, _ := http.NewRequest(method, c.base+path, &buf)
	req.Header.Set("X-Requester-Id", c.requester)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if into != nil {
		_ = json.NewDecoder(resp.Body).Decode(into)
	}
	return resp.StatusCode
}

type memoryStatus struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	LastError string `json:"last_error"`
	Attempts  int    `json:"attempts"`
}

// waitStatuses polls GET until every memory is done or failed.
func (c apiClient) waitStatuses(ids []string, limit time.Duration) map[string]memoryStatus {
	c.t.Helper()
	return c.waitUntil(ids, limit, "every memory done or failed", func(n map[string]int) bool {
		return n[graph.StatusDone]+n[graph.StatusFailed] == len(ids)
	})
}

// waitUntil polls GET of the memories until their count by status satisfies done, and
// returns their last states.
func (c apiClient) waitUntil(ids []string, limit time.Duration, want string, done func(byStatus map[string]int) bool) map[string]memoryStatus {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		out := map[string]memoryStatus{}
		byStatus := map[string]int{}
		for _, id := range ids {
			var m memoryStatus
			if status := c.call("GET", "/v1/memories/"+id, nil, &m); status != http.StatusOK {
				c.t.Fatalf("GET %s: %d", id, status)
			}
			out[id] = m
			byStatus[m.Status]++
		}
		if done(byStatus) {
			return out
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("not %s after %v: %+v", want, limit, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func suffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// TestServe_IngestAndRetry drives the pipeline through the API of a running memgate
// configured with an OpenAI-compatible endpoint (the scripted server): episodes go
// from queued to done; with the LLM down they fail with a reason; retry brings them
// back once it recovers.
func TestServe_IngestAndRetry(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	llm := llmtest.New()
	defer llm.Close()
	agent := "ingest-" + suffix()
	neo4jtest.Forget(t, agent)
	cmd, base := startBinary(t, map[string]string{
		"MEMGATE_LLM_BASE_URL": llm.BaseURL(), "MEMGATE_LLM_API_KEY": "test", "MEMGATE_LLM_MAX_RETRIES": "0",
		"MEMGATE_INGEST_MAX_ATTEMPTS": "1", "MEMGATE_INGEST_SCOPE": "agent-" + agent,
	})
	defer cmd.stop(t)
	c := apiClient{t: t, base: base, requester: "alice"}
	c.call("POST", "/v1/agents", map[string]any{"id": agent}, nil)

	var first struct{ ID string }
	c.call("POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": llm.Knows("Ann", "Ben")}, &first)
	if got := c.waitStatuses([]string{first.ID}, 30*time.Second)[first.ID]; got.Status != graph.StatusDone || got.Attempts != 1 {
		t.Fatalf("memory %+v, want done after one attempt", got)
	}

	llm.Fail(1, llmtest.Fault500)
	var second struct{ ID string }
	c.call("POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": llm.Knows("Cid", "Dee")}, &second)
	got := c.waitStatuses([]string{second.ID}, 30*time.Second)[second.ID]
	if got.Status != graph.StatusFailed || got.LastError == "" {
		t.Fatalf("memory %+v, want failed with the reason", got)
	}
	other := apiClient{t: t, base: base, requester: "mallory"}
	if status := other.call("POST", "/v1/memories/"+second.ID+"/retry", nil, nil); status != http.StatusNotFound {
		t.Fatalf("another requester retrying a private memory: %d, want 404", status)
	}
	if status := c.call("POST", "/v1/memories/"+first.ID+"/retry", nil, nil); status != http.StatusConflict {
		t.Fatalf("retrying a done memory: %d, want 409", status)
	}
	llm.Fail(0)
	if status := c.call("POST", "/v1/memories/"+second.ID+"/retry", nil, nil); status != http.StatusAccepted {
		t.Fatalf("retry: %d, want 202", status)
	}
	if got := c.waitStatuses([]string{second.ID}, 30*time.Second)[second.ID]; got.Status != graph.StatusDone {
		t.Fatalf("after retry: %+v, want done", got)
	}
}

// TestServe_KillMidRun kills memgate with SIGKILL while it is extracting, starts it
// again, and checks every accepted episode was processed, each saved exactly once.
func TestServe_KillMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	llm := llmtest.New()
	defer llm.Close()
	llm.Latency(400 * time.Millisecond)
	s := suffix()
	neo4jtest.Forget(t, s)
	env := map[string]string{
		"MEMGATE_LLM_BASE_URL": llm.BaseURL(), "MEMGATE_LLM_API_KEY": "test", "MEMGATE_INGEST_LEASE": "2s",
		"MEMGATE_INGEST_POLL": "50ms", "MEMGATE_INGEST_WORKERS": "2", "MEMGATE_INGEST_SCOPE": "agent-kill-" + s,
		// The waits read nine memories every 20 ms, more than a host key's rate limit
		// allows once Neo4j answers fast (Neo4j 2026 did: 429).
		"MEMGATE_SERVER_RATE_LIMIT": "0",
	}
	cmd, base := startBinary(t, env)
	c := apiClient{t: t, base: base, requester: "alice"}
	var ids []string
	var groups []string
	for a := 0; a < 3; a++ {
		agent := fmt.Sprintf("kill-%s-%d", s, a)
		c.call("POST", "/v1/agents", map[string]any{"id": agent}, nil)
		groups = append(groups, "agent-"+agent+"-private")
		for i := 0; i < 3; i++ {
			var m struct{ ID string }
			c.call("POST", "/v1/memories", map[string]any{"agent_id": agent,
				"messages": llm.Knows(fmt.Sprintf("P%s%d%d", s, a, i), fmt.Sprintf("Q%s%d%d", s, a, i))}, &m)
			ids = append(ids, m.ID)
		}
	}
	c.waitUntil(ids, 30*time.Second, "an episode done and another in the middle of extraction", func(n map[string]int) bool {
		return n[graph.StatusDone] > 0 && n[graph.StatusProcessing] > 0
	})
	cmd.kill(t)

	cmd, base = startBinary(t, env)
	defer cmd.stop(t)
	c.base = base
	for id, m := range c.waitStatuses(ids, 60*time.Second) {
		if m.Status != graph.StatusDone {
			t.Fatalf("%s: %+v, want done", id, m)
		}
	}
	db := neo4jtest.DB(t)
	for a, g := range groups {
		var names []string
		for i := 0; i < 3; i++ {
			names = append(names, fmt.Sprintf("P%s%d%d", s, a, i), fmt.Sprintf("Q%s%d%d", s, a, i))
		}
		near, err := db.Neighbourhoods(context.Background(), []graph.NeighbourhoodQuery{{GroupID: g, Names: names}}, 100)
		if err != nil {
			t.Fatal(err)
		}
		ents, facts := near[0].Entities, near[0].Facts
		if len(ents) != 6 || len(facts) != 3 {
			t.Fatalf("%s: %d entities and %d facts, want 6 and 3: nothing twice", g, len(ents), len(facts))
		}
		for _, f := range facts {
			if len(f.Episodes) != 1 {
				t.Fatalf("%s: fact %s supported by %v, want one episode", g, f.Fact, f.Episodes)
			}
		}
	}
	t.Logf("%d extraction calls for %d episodes (an interrupted extraction runs again)", llm.ChatCalls.Load(), len(ids))
}

// TestServe_TwoProcesses runs two memgate processes on one Neo4j: every episode is
// extracted exactly once, whichever process takes it; and a write through the first
// is read through the second with its consistency token (readsItsWriteThrough).
func TestServe_TwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	llm := llmtest.New()
	defer llm.Close()
	llm.Latency(50 * time.Millisecond)
	s := suffix()
	neo4jtest.Forget(t, s)
	env := map[string]string{
		"MEMGATE_LLM_BASE_URL": llm.BaseURL(), "MEMGATE_LLM_API_KEY": "test", "MEMGATE_INGEST_POLL": "20ms",
		"MEMGATE_INGEST_WORKERS": "3", "MEMGATE_INGEST_SCOPE": "agent-two-" + s,
	}
	first, base := startBinary(t, env)
	defer first.stop(t)
	second, secondBase := startBinary(t, env)
	defer second.stop(t)
	c := apiClient{t: t, base: base, requester: "alice"}
	var ids []string
	for a := 0; a < 4; a++ {
		agent := fmt.Sprintf("two-%s-%d", s, a)
		c.call("POST", "/v1/agents", map[string]any{"id": agent}, nil)
		if a == 0 {
			ids = append(ids, readsItsWriteThrough(t, base, secondBase, agent, llm.Knows("R"+s, "W"+s)))
		}
		for i := 0; i < 6; i++ {
			var m struct{ ID string }
			c.call("POST", "/v1/memories", map[string]any{"agent_id": agent,
				"messages": llm.Knows(fmt.Sprintf("P%s%d%d", s, a, i), fmt.Sprintf("Q%s%d%d", s, a, i))}, &m)
			ids = append(ids, m.ID)
		}
	}
	for id, m := range c.waitStatuses(ids, 60*time.Second) {
		if m.Status != graph.StatusDone || m.Attempts != 1 {
			t.Fatalf("%s: %+v, want done in one attempt", id, m)
		}
	}
	if calls := llm.ChatCalls.Load(); calls != int64(len(ids)) {
		t.Fatalf("%d extractions for %d episodes: an episode was processed twice", calls, len(ids))
	}
}

// readsItsWriteThrough writes a memory through the memgate at base with the Go client
// and reads it through the one at other, which is handed the write's consistency token
// (read-your-writes between replicas); other refuses a malformed token with 400 in the
// one error shape. It returns the memory's id.
func readsItsWriteThrough(t *testing.T, base, other, agent string, messages any) string {
	t.Helper()
	ctx := context.Background()
	writer := client.New(base, "", "alice")
	acc, err := writer.Add(ctx, client.Memory{AgentID: agent, Messages: messages}, "")
	if err != nil {
		t.Fatal(err)
	}
	if writer.Token() == "" {
		t.Fatal("a write through the first memgate answered no consistency token")
	}
	reader := client.New(other, "", "alice")
	reader.SetToken(writer.Token())
	if got, err := reader.Get(ctx, acc.ID); err != nil || got.ID != acc.ID {
		t.Fatalf("the second memgate, sent the write's token: %+v, %v; want memory %s", got, err, acc.ID)
	}
	reader.SetToken(writer.Token()[1:] + "A")
	var refused *client.Error // the client reads the one error shape; "unknown" when it is not that
	if _, err := reader.Get(ctx, acc.ID); !errors.As(err, &refused) || refused.Status != http.StatusBadRequest || refused.Code == "unknown" {
		t.Fatalf("a malformed token through the second memgate: %v, want 400 in the one error shape", err)
	}
	return acc.ID
}

// TestServe_ShutdownHandsBack stops memgate with SIGTERM in the middle of an
// extraction: the episode goes back to the queue at once, and the next process takes
// it without waiting for the (long) lease to expire; the interrupted attempt is not
// counted.
func TestServe_ShutdownHandsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	llm := llmtest.New()
	defer llm.Close()
	llm.Latency(3 * time.Second)
	s := suffix()
	neo4jtest.Forget(t, s)
	env := map[string]string{
		"MEMGATE_LLM_BASE_URL": llm.BaseURL(), "MEMGATE_LLM_API_KEY": "test", "MEMGATE_INGEST_POLL": "20ms",
		"MEMGATE_INGEST_LEASE": "10m", "MEMGATE_INGEST_SCOPE": "agent-back-" + s,
	}
	cmd, base := startBinary(t, env)
	c := apiClient{t: t, base: base, requester: "alice"}
	agent := "back-" + s
	c.call("POST", "/v1/agents", map[string]any{"id": agent}, nil)
	var m struct{ ID string }
	c.call("POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": llm.Knows("Ann"+s, "Ben"+s)}, &m)
	c.waitUntil([]string{m.ID}, 10*time.Second, "processing", func(n map[string]int) bool { return n[graph.StatusProcessing] == 1 })
	cmd.stop(t)

	llm.Latency(0)
	next, base := startBinary(t, env)
	defer next.stop(t)
	c.base = base
	start := time.Now()
	if got := c.waitStatuses([]string{m.ID}, 30*time.Second)[m.ID]; got.Status != graph.StatusDone || got.Attempts != 1 {
		t.Fatalf("after the restart: %+v, want done in one counted attempt (the interrupted one does not count); the first memgate's log:\n%s",
			got, cmd.stderr.String())
	}
	t.Logf("done %v after the restart, with a 10-minute lease", time.Since(start).Round(time.Millisecond))
}

// TestServe_StartTogether starts three memgates at once on a fresh Neo4j, as a
// scaled-out deployment does: each applies the schema, and all become ready (the
// first run of this test found two of three exiting on an index another had just
// created).
func TestServe_StartTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	uri, _ := neo4jtest.Private(t)
	env := map[string]string{"MEMGATE_NEO4J_URI": uri}
	// As earlier memgates left them, which they must rebuild: the fact index
	// quantized, the entity index unquantized with Neo4j's HNSW settings.
	driver, err := neo4j.NewDriverWithContext(uri, neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close(context.Background())
	cypher := func(q string) []*neo4j.Record {
		t.Helper()
		res, err := neo4j.ExecuteQuery(context.Background(), driver, q, nil, neo4j.EagerResultTransformer)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return res.Records
	}
	cypher("CREATE VECTOR INDEX edge_fact_embedding FOR ()-[e:RELATES_TO]-() ON (e.fact_embedding) " +
		"OPTIONS {indexConfig: {`vector.dimensions`: 256, `vector.quantization.enabled`: true}}")
	cypher("CREATE VECTOR INDEX entity_name_embedding FOR (n:Entity) ON (n.name_embedding) " +
		"OPTIONS {indexConfig: {`vector.dimensions`: 256, `vector.quantization.enabled`: false}}")
	var all []*process
	for i := 0; i < 3; i++ {
		all = append(all, launch(t, env))
	}
	for _, p := range all {
		waitStatus(t, p.base+"/readyz", http.StatusOK, 2*time.Minute) // three schema runs on a fresh database
		p.stop(t)
	}
	indexes := cypher("SHOW VECTOR INDEXES YIELD name, options RETURN name, [options.indexConfig.`vector.quantization.enabled`, " +
		"options.indexConfig.`vector.hnsw.m`, options.indexConfig.`vector.hnsw.ef_construction`] ORDER BY name")
	if len(indexes) != 2 {
		t.Fatalf("%d vector indexes, want 2", len(indexes))
	}
	for _, r := range indexes {
		if got := fmt.Sprint(r.Values[1]); got != "[false 32 200]" {
			t.Errorf("vector index %v: quantization, m, ef_construction %s, want [false 32 200]", r.Values[0], got)
		}
	}
}

// TestServe_SweepsExpired: a running memgate erases a memory once its expires_at has
// passed, within memory.expiry_sweep.
func TestServe_SweepsExpired(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	agent := "sweep-" + suffix()
	neo4jtest.Forget(t, agent)
	cmd, base := startBinary(t, map[string]string{"MEMGATE_MEMORY_EXPIRY_SWEEP": "200ms", "MEMGATE_INGEST_SCOPE": "agent-" + agent})
	defer cmd.stop(t)
	c := apiClient{t: t, base: base, requester: "alice"}
	c.call("POST", "/v1/agents", map[string]any{"id": agent}, nil)
	var m struct{ ID string }
	if status := c.call("POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "Ann knows Ben.",
		"expires_at": time.Now().Add(time.Second).Format(time.RFC3339Nano)}, &m); status != http.StatusAccepted {
		t.Fatalf("add: %d", status)
	}
	for deadline := time.Now().Add(30 * time.Second); neo4jtest.Count(t, "MATCH (e:Episodic {uuid: $id}) RETURN count(e)", map[string]any{"id": m.ID}) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the expired memory is still stored 30 s after it expired")
		}
	}
}
