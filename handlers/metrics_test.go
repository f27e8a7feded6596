package handlers_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/handlers"
)

// TestMetrics scrapes /metrics after a few requests: requests by route pattern and
// status, a denial by its kind, the kind of space refused and the route, the queue
// depth, and nothing that names an id.
func TestMetrics(t *testing.T) {
	t.Parallel()
	owner, other, agent := ownerWorld(t)
	var a added
	owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "Metrics test."}, &a)
	owner.must(http.StatusOK, "GET", "/v1/memories/"+a.ID, nil, nil)
	if status, _ := other.do("GET", "/v1/memories/"+a.ID, nil); status != http.StatusNotFound {
		t.Fatalf("another requester's GET: %d", status)
	}
	if status, _ := other.do("POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "x"}); status != http.StatusForbidden {
		t.Fatalf("another requester's write: %d", status)
	}
	resp, body := do(t, "GET", owner.base+"/metrics", nil, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	text := string(body)
	for _, want := range []string{
		`memgate_http_request_duration_seconds_count{method="POST",route="/v1/memories",status="202"} 1`,
		`memgate_http_request_duration_seconds_count{method="GET",route="/v1/memories/:id",status="200"} 1`,
		`memgate_http_request_duration_seconds_count{method="GET",route="/v1/memories/:id",status="404"} 1`,
		`memgate_http_request_duration_seconds_count{method="POST",route="/v1/memories",status="403"} 1`,
		`memgate_denials_total{kind="namespace_denied",route="/v1/memories",space="private"} 1`,
		`memgate_ingest_queue_depth{status="queued"}`,
		`go_goroutines`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(text, a.ID) || strings.Contains(text, agent) {
		t.Error("/metrics names a memory or an agent")
	}
}

// TestMetrics_DenialsNameNoOne: refusals of requesters a key may not name, each with
// an id of its own, and of a team's space, add no series to /metrics and name none of
// them: every label is from a closed set.
func TestMetrics_DenialsNameNoOne(t *testing.T) {
	t.Parallel()
	suffix := randomSuffix()
	neo4jtest.Forget(t, suffix)
	srv := newServer(t, []access.KeySpec{
		{Name: "bound-" + suffix, SHA256: access.HashKey("key-bound-" + suffix), Requesters: []string{"app-*"}},
		{Name: "agent-host", SHA256: access.HashKey(matrixKeys["trusted"]), Trusted: true}})
	series := func() (int, string) {
		_, body := do(t, "GET", srv.URL+"/metrics", nil, "")
		n := 0 // lines of the denials' series
		for _, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, "memgate_denials_total{") {
				n++
			}
		}
		return n, string(body)
	}
	refuse := func(i int) {
		c := client{t: t, base: srv.URL, key: "key-bound-" + suffix, requester: fmt.Sprintf("victim%d-%s", i, suffix)}
		if s, _ := c.do("GET", "/v1/agents", nil); s != http.StatusForbidden {
			t.Fatalf("a requester the key may not name: %d, want 403", s)
		}
		team := client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: fmt.Sprintf("outsider%d-%s", i, suffix)}
		if s, _ := team.do("POST", "/v1/webhooks", map[string]any{"url": "http://127.0.0.1:9/x", "team": "secret-team-" + suffix,
			"events": []string{"memory.done"}}); s != http.StatusNotFound && s != http.StatusForbidden {
			t.Fatalf("a webhook on a team that does not exist: %d", s)
		}
	}
	refuse(0)
	// A method of its own, which HTTP lets a client send: no label of its own.
	method := func(i int) {
		req, _ := http.NewRequest(fmt.Sprintf("PROBE%dMETHOD", i), srv.URL+"/v1/memories", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	method(0)
	countAll := func() int {
		_, body := do(t, "GET", srv.URL+"/metrics", nil, "")
		return strings.Count(string(body), "\nmemgate_http_request_duration_seconds_count{") + strings.Count(string(body), "\nmemgate_denials_total{")
	}
	before, _ := series()
	all := countAll()
	for i := 1; i <= 40; i++ {
		refuse(i)
		method(i)
	}
	if after := countAll(); after != all {
		t.Errorf("/metrics had %d request and denial series, %d after 40 requests of methods of their own: want none added", all, after)
	}
	after, text := series()
	if after != before {
		t.Errorf("/metrics had %d denial series, %d after 40 refusals of distinct requesters: want none added", before, after)
	}
	for _, word := range []string{"victim", "outsider", "secret-team", "PROBE", suffix} {
		if strings.Contains(text, word) {
			t.Errorf("/metrics names %q", word)
		}
	}
	if !strings.Contains(text, `memgate_denials_total{kind="requester_denied",route="/v1/agents",space="none"}`) {
		t.Errorf("/metrics lacks the requester denials by kind and route:\n%s", text)
	}
}

// TestMetrics_Key: with server.metrics_key_sha256 set, /metrics answers only a scrape
// with the key, 401 in the one error shape otherwise.
func TestMetrics_Key(t *testing.T) {
	t.Parallel()
	db := neo4jtest.DB(t)
	ring, err := access.NewKeyring(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := handlers.NewMetrics(handlers.Observed{Queue: db})
	for name, h := range map[string]http.Handler{
		"on the service's listener": handlers.New(handlers.Deps{Log: neo4jtest.Logger(t), Keys: ring, Ready: db, BodyLimit: bodyLimit,
			HandlerTimeout: 10 * time.Second, Version: "test", Metrics: m, MetricsKeySHA256: access.HashKey("scrape-key")}),
		"on a listener of its own": handlers.MetricsServer(m, access.HashKey("scrape-key"), neo4jtest.Logger(t)),
	} {
		srv := httptest.NewServer(h)
		for key, want := range map[string]int{"": http.StatusUnauthorized, "wrong": http.StatusUnauthorized, "scrape-key": http.StatusOK} {
			header := map[string]string{}
			if key != "" {
				header["Authorization"] = "Bearer " + key
			}
			resp, body := do(t, "GET", srv.URL+"/metrics", header, "")
			if resp.StatusCode != want || (want == http.StatusOK) != strings.Contains(string(body), "go_goroutines") {
				t.Errorf("%s, key %q: %d %.80s, want %d", name, key, resp.StatusCode, body, want)
			}
			if want == http.StatusUnauthorized && !strings.Contains(string(body), `"code":"unauthenticated"`) {
				t.Errorf("%s, key %q: %s, want the one error shape", name, key, body)
			}
		}
		srv.Close()
	}
}
