package handlers_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestMetrics scrapes /metrics after a few requests: requests by route pattern and
// status, a denial by the kind of space refused, the queue depth, and nothing that
// names an id.
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
		`memgate_denials_total{reason="only the agent's owner may write its memories",space="private"} 1`,
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
