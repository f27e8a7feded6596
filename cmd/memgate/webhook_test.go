package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestWebhook_KilledMidDelivery: memgate is killed (SIGKILL) while it sends an event,
// after the change committed and before the receiver answered; the next memgate sends
// it, once its predecessor's lease has expired, and the receiver gets it, verified
// with the Standard Webhooks library, under the same webhook-id.
func TestWebhook_KilledMidDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	mark := suffix()
	agent := "hook-" + mark
	neo4jtest.Forget(t, mark) // the agent's and its requester's (alice-mark), whose principal the webhook makes

	var mu sync.Mutex
	var secret string
	var got []string // the webhook-ids of verified requests
	arrived, release := make(chan struct{}), make(chan struct{})
	var first sync.Once
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		held := false
		first.Do(func() { held = true })
		if held { // the first attempt hangs until its sender is dead
			close(arrived)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		mu.Lock()
		defer mu.Unlock()
		v, err := standardwebhooks.NewWebhook(secret)
		if err == nil {
			err = v.Verify(body, r.Header)
		}
		if err != nil {
			t.Errorf("a request failed verification: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got = append(got, r.Header.Get("webhook-id"))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	defer close(release)

	env := map[string]string{"MEMGATE_WEBHOOKS_WORKERS": "2", "MEMGATE_WEBHOOKS_SCOPE": mark, "MEMGATE_WEBHOOKS_POLL": "50ms",
		"MEMGATE_WEBHOOKS_TIMEOUT": "2s", "MEMGATE_WEBHOOKS_BACKOFF_MIN": "50ms", "MEMGATE_WEBHOOKS_ALLOW_LOOPBACK": "true",
		"MEMGATE_INGEST_SCOPE": "agent-" + agent, "MEMGATE_INGEST_POLL": "50ms"}
	first1, base := startBinary(t, env)
	c := apiClient{t: t, base: base, requester: "alice-" + mark}
	c.call("POST", "/v1/agents", map[string]any{"id": agent}, nil)
	var hook struct{ ID, Secret string }
	if status := c.call("POST", "/v1/webhooks", map[string]any{"url": receiver.URL + "/hook", "agent_id": agent,
		"events": []string{"memory.done"}}, &hook); status != http.StatusCreated {
		t.Fatalf("registering the webhook: %d", status)
	}
	mu.Lock()
	secret = hook.Secret
	mu.Unlock()
	var m struct{ ID string }
	c.call("POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "Kim works at Initech."}, &m)
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatal("memgate did not send the memory's memory.done within a minute")
	}
	first1.kill(t)

	_, base = startBinary(t, env)
	c.base = base
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var ds struct {
			Items []struct {
				EventID string `json:"event_id"`
				Subject string `json:"subject"`
				Status  string `json:"status"`
			}
		}
		c.call("GET", "/v1/webhooks/"+hook.ID+"/deliveries", nil, &ds)
		if len(ds.Items) == 1 && ds.Items[0].Status == "delivered" {
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || got[0] != ds.Items[0].EventID || ds.Items[0].Subject != m.ID {
				t.Errorf("received %v, want the one event %+v", got, ds.Items[0])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart: deliveries %+v", ds.Items)
		}
	}
}
