package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/handlers"
	"github.com/memgate/memgate/service"
	"github.com/memgate/memgate/webhook"
)

// newServer serves the API over a real test database with the given host keys.
// bodyLimit is small so the limit is easy to test; 256K holds every test body.
var bodyLimit = "256K"

func newServer(t *testing.T, keys []access.KeySpec) *httptest.Server {
	t.Helper()
	return newServerWith(t, keys, nil, func(*service.Service) {})
}

// newServerWith is newServer with an identity provider's verifier (or nil) and the
// service adjusted first (policy, limits).
func newServerWith(t *testing.T, keys []access.KeySpec, tokens access.TokenVerifier, adjust func(*service.Service)) *httptest.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test")
	}
	ring, err := access.NewKeyring(keys, tokens)
	if err != nil {
		t.Fatal(err)
	}
	db, log := neo4jtest.DB(t), neo4jtest.Logger(t)
	svc := &service.Service{
		Auth: access.Policy{AllowPrivate: true}, Dir: db, Mem: db, Find: db, Queue: db, Audit: db, Log: log, Now: time.Now,
		Embedder: extract.Hashing{Dimensions: neo4jtest.Dimensions}, Summarizer: extract.Extractive{},
		Ontology: graph.Ontology{EntityTypes: extract.DefaultEntityTypes},
		Limits: service.Limits{DefaultVisibility: "private", RefuseCredentials: true, MaxContentBytes: 64 << 10,
			BatchMaxItems: 10, PageSizeDefault: 20, PageSizeMax: 100},
	}
	metrics := handlers.NewMetrics(handlers.Observed{Queue: db})
	svc.OnDeny = metrics.Denied
	// Webhooks: test receivers listen on loopback, so the guard allows private
	// addresses (TestWebhook_SSRF adjusts it back).
	svc.Hooks, svc.Hosts, svc.CheckWebhookURL = db, ring, webhook.Guard{AllowLoopback: true}.CheckURL
	adjust(svc)
	e := handlers.New(handlers.Deps{
		Log: log, Keys: ring, Ready: db, Consistency: db, Service: svc,
		BodyLimit: bodyLimit, HandlerTimeout: 10 * time.Second, Version: "test", Metrics: metrics,
	})
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv
}

// do sends a request and reads the answer; both are checked against openapi.json
// (contract_test.go).
func do(t *testing.T, method, url string, header map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	return send(t, false, method, url, header, body)
}

// doMalformed is do for a request that is outside openapi.json on purpose (a test of
// 400s, of injection, of a missing key): it is sent as it is, and only the answer is
// checked against the document.
func doMalformed(t *testing.T, method, url string, header map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	return send(t, true, method, url, header, body)
}

// sendMalformed is client.do for a request outside openapi.json on purpose.
func (c client) sendMalformed(method, path string, body any) (int, []byte) {
	c.t.Helper()
	var text string
	if body != nil {
		text = mustJSON(c.t, body)
	}
	resp, out := doMalformed(c.t, method, c.base+path, c.header(), text)
	return resp.StatusCode, out
}

// send does the request and returns the answer. A read (GET, a search) or a DELETE
// answered 503, memgate's "retry later", is sent again, at most twice, as a client
// does: on a fresh test Neo4j, the first run of a query is planned (seconds of its CPU
// for the largest, a requester's erasure runs ten), and on two busy cores that can
// pass the server's 10 s limit. A create or a change is not: one answered 503 after
// its commit was sent may be stored, and sent again, stored twice (a DELETE sent
// again after it took effect answers 404, which the test sees).
func send(t *testing.T, malformed bool, method, url string, header map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	resp, out := sendOnce(t, malformed, method, url, header, body)
	retry := method == http.MethodGet || method == http.MethodDelete || (method == http.MethodPost && strings.HasSuffix(url, "/search"))
	for tries := 0; retry && resp.StatusCode == http.StatusServiceUnavailable && tries < 2; tries++ {
		t.Logf("%s %s answered 503 (%s); sent again", method, url, out)
		resp, out = sendOnce(t, malformed, method, url, header, body)
	}
	return resp, out
}

func sendOnce(t *testing.T, malformed bool, method, url string, header map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: newContract(t, malformed)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// mustErrorBody asserts the one error shape and returns it.
func mustErrorBody(t *testing.T, resp *http.Response, body []byte, status int, code string) handlers.ErrorBody {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, status, body)
	}
	var e handlers.ErrorBody
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("error body %s is not the error shape: %v", body, err)
	}
	if e.Error.Code != code || e.Error.Message == "" {
		t.Fatalf("error = %+v, want code %s and a message", e.Error, code)
	}
	if e.Error.RequestID == "" || e.Error.RequestID != resp.Header.Get("X-Request-Id") {
		t.Fatalf("error request_id %q does not match X-Request-Id %q", e.Error.RequestID, resp.Header.Get("X-Request-Id"))
	}
	return e
}

func TestAuth(t *testing.T) {
	t.Parallel()
	srv := newServer(t, []access.KeySpec{
		{Name: "agent-host", SHA256: access.HashKey("key-agent"), Trusted: true},
		{Name: "ops", SHA256: access.HashKey("key-ops"), Trusted: true, Admin: true},
	})

	t.Run("OK", func(t *testing.T) {
		for key, want := range map[string]access.Host{
			"Bearer key-agent": {Name: "agent-host", Trusted: true, Requesters: []string{"*"}},
			"bearer key-ops":   {Name: "ops", Trusted: true, Admin: true, Requesters: []string{"*"}},
		} {
			resp, body := do(t, "GET", srv.URL+"/v1/whoami", map[string]string{"Authorization": key}, "")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: status %d, body %s", key, resp.StatusCode, body)
			}
			var got handlers.WhoAmI
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Host, want) || got.DevMode {
				t.Errorf("%s: whoami = %+v, want host %+v outside dev mode", key, got, want)
			}
		}
	})

	t.Run("ErrUnauthenticated", func(t *testing.T) {
		for _, header := range []map[string]string{
			nil,
			{"Authorization": ""},
			{"Authorization": "Bearer"},
			{"Authorization": "Bearer wrong-key"},
			{"Authorization": "Basic a2V5LWFnZW50"},
			{"Authorization": "key-agent"},
			{"Authorization": "Bearer " + access.HashKey("key-agent")},
		} {
			resp, body := doMalformed(t, "GET", srv.URL+"/v1/whoami", header, "") // no key, or not a bearer one
			mustErrorBody(t, resp, body, http.StatusUnauthorized, "unauthenticated")
			if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%v: WWW-Authenticate = %q", header, resp.Header.Get("WWW-Authenticate"))
			}
		}
	})

	t.Run("ProbesNeedNoKey", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			if resp, body := do(t, "GET", srv.URL+path, nil, ""); resp.StatusCode != http.StatusOK {
				t.Errorf("%s: status %d, body %s", path, resp.StatusCode, body)
			}
		}
	})
}

func TestAuth_DevMode(t *testing.T) {
	t.Parallel()
	srv := newServer(t, nil)
	// openapi.json requires a host key; dev mode is the one deployment that needs none.
	resp, body := doMalformed(t, "GET", srv.URL+"/v1/whoami", nil, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, body %s", resp.StatusCode, body)
	}
	var got handlers.WhoAmI
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Host, access.DevHost) || !got.DevMode {
		t.Fatalf("whoami = %+v, want the dev host in dev mode", got)
	}
}

func TestErrors_OneShape(t *testing.T) {
	t.Parallel()
	srv := newServer(t, nil)
	// Every request here is to a route or method openapi.json does not have.

	t.Run("UnknownRoute", func(t *testing.T) {
		resp, body := doMalformed(t, "GET", srv.URL+"/v1/nothing-here", nil, "")
		mustErrorBody(t, resp, body, http.StatusNotFound, "not_found")
	})
	t.Run("BodyTooLarge", func(t *testing.T) {
		resp, body := doMalformed(t, "POST", srv.URL+"/v1/whoami", map[string]string{"Content-Type": "application/json"},
			`{"x":"`+strings.Repeat("a", 300<<10)+`"}`)
		mustErrorBody(t, resp, body, http.StatusRequestEntityTooLarge, "too_large")
	})
	t.Run("RequestIDKeptWhenWellFormed", func(t *testing.T) {
		resp, body := doMalformed(t, "GET", srv.URL+"/v1/nothing-here", map[string]string{"X-Request-Id": "trace-abc.123"}, "")
		if e := mustErrorBody(t, resp, body, http.StatusNotFound, "not_found"); e.Error.RequestID != "trace-abc.123" {
			t.Fatalf("request_id = %q, want the caller's", e.Error.RequestID)
		}
	})
	t.Run("RequestIDReplacedWhenMalformed", func(t *testing.T) {
		forged := "x\" injected=\"1"
		resp, body := doMalformed(t, "GET", srv.URL+"/v1/nothing-here", map[string]string{"X-Request-Id": forged}, "")
		if e := mustErrorBody(t, resp, body, http.StatusNotFound, "not_found"); e.Error.RequestID == forged {
			t.Fatal("a malformed request id was echoed back")
		}
	})
}

// ingest runs the ingestion pipeline (the offline extractor and embedder) over the
// spaces whose group_id starts with one of scopes, until the test ends. Tests share the
// database, so each runs its own spaces only. The runners claim within 20 ms what the
// test's server queues (graph.Queue.Queued), and their retries when due; their poll
// (neo4jtest.RunnerPoll) is for what nothing woke them for.
func ingest(t *testing.T, scopes ...string) {
	ingestWith(t, false, scopes...)
}

// ingestWith is ingest holding contradictions for review (memory.conflicts: review)
// when review is set.
func ingestWith(t *testing.T, review bool, scopes ...string) {
	db := neo4jtest.DB(t)
	for _, scope := range scopes {
		r := &extract.Runner{
			Queue: db, Extractor: extract.Heuristic{}, Types: extract.DefaultEntityTypes,
			Resolver: &extract.Resolver{Know: db, Embedder: extract.Hashing{Dimensions: neo4jtest.Dimensions}, Now: time.Now,
				Review: review},
			Workers: 2, Lease: time.Minute, MaxAttempts: 3, Backoff: 20 * time.Millisecond, Poll: neo4jtest.RunnerPoll,
			Log: neo4jtest.Logger(t), Metrics: &extract.Metrics{}, Scope: scope,
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { r.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
	}
}
