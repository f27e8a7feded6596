package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/memgate/memgate/config"
	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// The caller's span, as a client that traces would send it in traceparent.
const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// TestTracing_AddAndSearch runs memgate in this process with an in-memory span
// exporter, the scripted model server for chat and embeddings, and the real Neo4j. One
// memory is added under a caller's traceparent and searched once it is extracted. The
// spans must form the tree operations.md describes: each request a server span (the
// add's the child of the caller's span), its use case a child of it, the use case's
// queries (the add's group-committed episode_create too) and the search's embedding
// call children of the use case; the ingestion a trace of its own whose span links to
// the add's use case, with its phases, the chat call (model and tokens as the server
// reported them) and the save's queries below it; the polls of the queue no span. The
// model server must have received the chat span's traceparent, and the log lines of
// the add and of the ingestion their trace ids. No span may hold the memory's text, its
// names, the search's query or any prompt the model received, in any attribute, event,
// link or status.
func TestTracing_AddAndSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	llm := llmtest.New()
	defer llm.Close()
	agent := "traced-" + suffix()
	neo4jtest.Forget(t, agent)
	content := llm.Knows("Zephyrine Quillfeather", "Bartholomew Okonkwo")
	query := "Who does Quillfeather know?"

	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	var logs syncBuffer
	m := NewMain(traceConfig(t, llm, agent), slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	m.Tracer = tp
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("memgate's log:\n%s", logs.String())
		}
	}()
	base := "http://" + m.Addr()
	waitStatus(t, base+"/readyz", http.StatusOK, time.Minute)
	c := apiClient{t: t, base: base, requester: "alice"}
	if status := c.call("POST", "/v1/agents", map[string]any{"id": agent}, nil); status != http.StatusCreated {
		t.Fatalf("creating the agent: %d", status)
	}

	var added struct{ ID string }
	if status := tracedCall(t, base, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": content}, &added); status != http.StatusAccepted {
		t.Fatalf("adding the memory: %d", status)
	}
	if got := c.waitStatuses([]string{added.ID}, 30*time.Second)[added.ID]; got.Status != graph.StatusDone {
		t.Fatalf("memory %+v, want done", got)
	}
	var found struct {
		Facts []struct{ Fact string } `json:"facts"`
	}
	if status := c.call("POST", "/v1/memories/search", map[string]any{"agent_id": agent, "query": query}, &found); status != http.StatusOK || len(found.Facts) == 0 {
		t.Fatalf("search: %d, %+v; want the fact", status, found)
	}

	// An MCP tool call.
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_memory","arguments":{"id":%q}}}`, added.ID)
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("X-Requester-Id", "alice")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer bytes.Buffer
	_, _ = answer.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(answer.String(), added.ID) || strings.Contains(answer.String(), `"isError":true`) {
		t.Fatalf("MCP get_memory: %d %s", resp.StatusCode, answer.String())
	}

	// The ingestion's span ends after the memory reads done; wait for it.
	var spans tracetest.SpanStubs
	deadline := time.Now().Add(10 * time.Second)
	for {
		spans = exporter.GetSpans()
		if s := find(spans, "ingest episode", nil); s != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mustFind := func(name string, parent *tracetest.SpanStub) tracetest.SpanStub {
		t.Helper()
		s := find(spans, name, parent)
		if s == nil {
			where := "anywhere"
			if parent != nil {
				where = "under " + parent.Name
			}
			t.Fatalf("no span %q %s; spans:\n%s", name, where, tree(spans))
		}
		return *s
	}

	// The add: the caller's span → the request → the use case → its queries.
	addReq := mustFind("POST /v1/memories", nil)
	if addReq.SpanKind != trace.SpanKindServer || addReq.Parent.TraceID().String() != callerTrace ||
		addReq.Parent.SpanID().String() != callerSpan || !addReq.Parent.IsRemote() {
		t.Errorf("the add's request span: kind %v, parent %v; want a server span, the child of the caller's %s/%s",
			addReq.SpanKind, addReq.Parent, callerTrace, callerSpan)
	}
	if v := attr(addReq, "http.response.status_code"); v != "202" {
		t.Errorf("the add's http.response.status_code = %q, want 202", v)
	}
	if v := attr(addReq, "http.route"); v != "/v1/memories" {
		t.Errorf("the add's http.route = %q", v)
	}
	add := mustFind("service.Add", &addReq)
	create := mustFind("episode_create", &add) // run by the group commit, parented to its caller
	if attr(create, "db.system.name") != "neo4j" || attr(create, "db.response.returned_rows") != "1" {
		t.Errorf("episode_create's attributes: %v", create.Attributes)
	}
	mustFind("principal_resolve", ptr(mustFind("service.Resolve", &addReq)))

	// The search: request → use case → its queries and the query's embedding.
	searchReq := mustFind("POST /v1/memories/search", nil)
	if searchReq.Parent.IsValid() {
		t.Errorf("a request without traceparent has a parent: %v", searchReq.Parent)
	}
	search := mustFind("service.Search", &searchReq)
	embed := mustFind("embeddings text-embedding-3-small", &search)
	if attr(embed, "gen_ai.operation.name") != "embeddings" || attr(embed, "gen_ai.usage.input_tokens") != "1" {
		t.Errorf("the query's embedding span: %v", embed.Attributes)
	}
	var queries []string
	for _, s := range spans {
		if s.Parent.SpanID() == search.SpanContext.SpanID() && attr(s, "db.system.name") == "neo4j" {
			queries = append(queries, s.Name)
		}
	}
	if len(queries) == 0 {
		t.Errorf("no query span under service.Search; spans:\n%s", tree(spans))
	}

	// The MCP call: request → tool call → use case → query.
	tool := mustFind("tools/call get_memory", ptr(mustFind("POST /mcp", nil)))
	if attr(tool, "gen_ai.tool.name") != "get_memory" || attr(tool, "mcp.method.name") != "tools/call" {
		t.Errorf("the tool call's attributes: %v", tool.Attributes)
	}
	mustFind("episode_get", ptr(mustFind("service.Get", &tool)))

	// The ingestion: a trace of its own, linked to the add's use case.
	ingest := mustFind("ingest episode", nil)
	if ingest.Parent.IsValid() || ingest.SpanContext.TraceID() == add.SpanContext.TraceID() {
		t.Errorf("the ingestion's span: parent %v, trace %v; want the root of a new trace", ingest.Parent, ingest.SpanContext.TraceID())
	}
	if len(ingest.Links) != 1 || ingest.Links[0].SpanContext.SpanID() != add.SpanContext.SpanID() ||
		ingest.Links[0].SpanContext.TraceID() != add.SpanContext.TraceID() {
		t.Errorf("the ingestion's links: %+v; want one, to service.Add %v", ingest.Links, add.SpanContext.SpanID())
	}
	if attr(ingest, "memgate.episode.id") != added.ID || attr(ingest, "memgate.ingest.outcome") != "done" {
		t.Errorf("the ingestion's attributes: %v", ingest.Attributes)
	}
	extraction := mustFind("ingest.extract", &ingest)
	chat := mustFind("chat gpt-4o-mini", &extraction)
	prompts := llm.Prompts()
	for key, want := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
		"gen_ai.response.model": "scripted", "memgate.llm.task": "extraction", "memgate.llm.usage_estimated": "false"} {
		if got := attr(chat, key); got != want {
			t.Errorf("the chat span's %s = %q, want %q", key, got, want)
		}
	}
	if attr(chat, "gen_ai.usage.input_tokens") == "" || attr(chat, "gen_ai.usage.input_tokens") == "0" ||
		attr(chat, "gen_ai.usage.output_tokens") == "" || attr(chat, "gen_ai.usage.output_tokens") == "0" {
		t.Errorf("the chat span's tokens: %v", chat.Attributes)
	}
	mustFind("ingest.resolve", &ingest)
	save := mustFind("ingest.save", &ingest)
	mustFind("graph_save", &save) // the pipeline's group commit, parented to its first caller
	if s := find(spans, "episode_claim", nil); s != nil {
		t.Errorf("the claimer's poll made a span (%s): queries outside a trace make none", s.Name)
	}

	// The model server got the chat span's traceparent.
	want := fmt.Sprintf("00-%s-%s-01", chat.SpanContext.TraceID(), chat.SpanContext.SpanID())
	if !slices.Contains(llm.TraceParents(), want) {
		t.Errorf("the model server's traceparents %v hold no %s (the chat span's)", llm.TraceParents(), want)
	}

	// Logs: the add's request line and the ingestion's line carry their trace ids.
	logged := map[string]string{}
	for _, line := range strings.Split(logs.String(), "\n") {
		var l struct {
			Msg, Route string
			TraceID    string `json:"trace_id"`
		}
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		if l.Msg == "request" && l.Route == "/v1/memories" || l.Msg == "episode processed" {
			logged[l.Msg] = l.TraceID
		}
	}
	if logged["request"] != callerTrace {
		t.Errorf("the add's request log line has trace_id %q, want %s", logged["request"], callerTrace)
	}
	if logged["episode processed"] != ingest.SpanContext.TraceID().String() {
		t.Errorf("the ingestion's log line has trace_id %q, want %s", logged["episode processed"], ingest.SpanContext.TraceID())
	}

	// No text: the memory, its names, the query, the prompts.
	secrets := []string{content, "Zephyrine", "Quillfeather", "Okonkwo", query}
	if len(prompts) == 0 {
		t.Fatal("the model server saw no prompt")
	}
	for _, p := range prompts {
		secrets = append(secrets, p[:min(len(p), 60)])
	}
	secrets = append(secrets, extractionPromptStart)
	for _, s := range spans {
		for _, text := range spanTexts(s) {
			for _, secret := range secrets {
				if strings.Contains(text, secret) {
					t.Errorf("span %s holds %q: %q", s.Name, secret, text)
				}
			}
		}
	}
}

// extractionPromptStart begins the instructions of every extraction call.
const extractionPromptStart = "You read one episode of an AI agent's memory"

func traceConfig(t *testing.T, llm *llmtest.Server, agent string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memgate.yaml")
	yaml := fmt.Sprintf(`server:
  addr: 127.0.0.1:0
neo4j:
  uri: %s
llm:
  base_url: %s
  api_key: test
  max_retries: 0
embedder:
  base_url: %s
  api_key: test
  dimensions: %d
ingest:
  poll: 50ms
  max_attempts: 1
  scope: agent-%s
memory:
  expiry_sweep: 0s
`, neo4jtest.URI(t), llm.BaseURL(), llm.BaseURL(), neo4jtest.Dimensions, agent)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// tracedCall makes a call as alice with the caller's traceparent.
func tracedCall(t *testing.T, base, method, path string, body, into any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, base+path, bytes.NewReader(b))
	req.Header.Set("X-Requester-Id", "alice")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(into)
	return resp.StatusCode
}

// find returns the first span named name, the child of parent when parent is set.
func find(spans tracetest.SpanStubs, name string, parent *tracetest.SpanStub) *tracetest.SpanStub {
	for i, s := range spans {
		if s.Name == name && (parent == nil || s.Parent.SpanID() == parent.SpanContext.SpanID()) {
			return &spans[i]
		}
	}
	return nil
}

func ptr(s tracetest.SpanStub) *tracetest.SpanStub { return &s }

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// spanTexts is every string a span carries: its name, status, attributes, events'
// names and attributes, links' attributes.
func spanTexts(s tracetest.SpanStub) []string {
	out := []string{s.Name, s.Status.Description}
	for _, kv := range s.Attributes {
		out = append(out, kv.Value.String())
	}
	for _, e := range s.Events {
		out = append(out, e.Name)
		for _, kv := range e.Attributes {
			out = append(out, kv.Value.String())
		}
	}
	for _, l := range s.Links {
		for _, kv := range l.Attributes {
			out = append(out, kv.Value.String())
		}
	}
	return out
}

// tree lists the spans as trees, for a failure's message.
func tree(spans tracetest.SpanStubs) string {
	var b strings.Builder
	var walk func(parent trace.SpanID, depth int)
	walk = func(parent trace.SpanID, depth int) {
		for _, s := range spans {
			if s.Parent.SpanID() == parent {
				fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", depth), s.Name)
				walk(s.SpanContext.SpanID(), depth+1)
			}
		}
	}
	roots := map[trace.SpanID]bool{}
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID()] = true
	}
	for _, s := range spans {
		if !ids[s.Parent.SpanID()] && !roots[s.Parent.SpanID()] {
			roots[s.Parent.SpanID()] = true
			walk(s.Parent.SpanID(), 0)
		}
	}
	return b.String()
}

// TestTracing_ExportsOTLP runs the binary with only OTEL_EXPORTER_OTLP_ENDPOINT set,
// towards a collector in the test: its spans arrive there by OTLP over HTTP (protobuf),
// with the request's route and the caller's trace id, and SIGTERM still exits 0.
func TestTracing_ExportsOTLP(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	var mu sync.Mutex
	var received [][]byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
			mu.Lock()
			received = append(received, body)
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	p, base := startBinary(t, map[string]string{"MEMGATE_INGEST_WORKERS": "0", "MEMGATE_MEMORY_EXPIRY_SWEEP": "0s",
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_SERVICE_NAME": "memgate-traced"})
	req, _ := http.NewRequest("GET", base+"/v1/whoami", nil)
	req.Header.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	traceID, _ := hex.DecodeString(callerTrace)
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		all := bytes.Join(received, nil)
		mu.Unlock()
		if bytes.Contains(all, []byte("GET /v1/whoami")) && bytes.Contains(all, traceID) && bytes.Contains(all, []byte("memgate-traced")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector got no span of GET /v1/whoami in trace %s named memgate-traced (%d exports)", callerTrace, len(received))
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.stop(t) // exits 0
	if !strings.Contains(p.stderr.String(), `"msg":"tracing on"`) {
		t.Errorf("memgate did not log that tracing is on:\n%s", p.stderr.String())
	}
}
