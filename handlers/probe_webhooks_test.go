package handlers_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
	"github.com/memgate/memgate/webhook"
)

// probeHooks are the probe's webhooks: one path of the sink per principal and what it
// follows.
type probeHooks struct {
	sink   *hookSink
	suffix string
	paths  map[string][]string // principal -> its webhooks' paths
}

// subscribe registers who's webhooks: each agent of agents, the team when member, the
// audit events when admin.
func (h *probeHooks) subscribe(c client, who string, agents []string, member bool, team string, admin bool) {
	c.t.Helper()
	if h.paths == nil {
		h.paths = map[string][]string{}
	}
	register := func(name string, body map[string]any) {
		path := "/" + who + "/" + name
		body["url"] = h.sink.srv.URL + path
		var v hookView
		c.must(http.StatusCreated, "POST", "/v1/webhooks", body, &v)
		h.sink.mu.Lock()
		h.sink.secrets[path], h.sink.ids[path] = v.Secret, v.ID
		h.sink.mu.Unlock()
		h.paths[who] = append(h.paths[who], path)
	}
	for _, agent := range agents {
		register(agent, map[string]any{"agent_id": agent, "events": graph.MemoryEvents, "include_content": true})
	}
	if member {
		register("team", map[string]any{"team": team, "events": graph.MemoryEvents, "include_content": true})
	}
	if admin {
		register("audit", map[string]any{"audit": true, "events": []string{graph.EventAccessDenied}})
	}
}

// deliver sends the probe's deliveries until the test ends.
func (h *probeHooks) deliver(t *testing.T, svc *service.Service) {
	d := &webhook.Deliverer{Store: neo4jtest.DB(t), Service: svc, Guard: webhook.Guard{AllowLoopback: true},
		Log: neo4jtest.Logger(t), Workers: 4, Timeout: 5 * time.Second, Poll: 200 * time.Millisecond,
		BackoffMin: 20 * time.Millisecond, BackoffMax: 100 * time.Millisecond, Horizon: time.Minute, Scope: h.suffix}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// check waits until every delivery made so far has finished, then checks what each
// principal received: every event about a space it may read (readable), content only
// the memory's own (no seed's word in another memory's event), and the memories of
// must among what it received, with an event for every principal.
func (h *probeHooks) check(t *testing.T, names []string, seeds []*seed, derived map[string][]string, readable func(who, group string) bool, must map[string][]string) {
	t.Helper()
	cutoff := time.Now().UTC()
	pending := `MATCH (d:WebhookDelivery) WHERE d.requester CONTAINS $mark AND d.at <= $cutoff AND d.status = 'pending' RETURN count(d)`
	for deadline, wait := time.Now().Add(3*time.Minute), neo4jtest.FirstPoll; neo4jtest.Count(t, pending, map[string]any{"mark": h.suffix, "cutoff": cutoff}) != 0; wait = neo4jtest.Poll(wait) {
		if time.Now().After(deadline) {
			t.Fatal("the probe's webhook deliveries did not finish")
		}
	}
	h.sink.mu.Lock()
	defer h.sink.mu.Unlock()
	if len(h.sink.forged) > 0 {
		t.Errorf("webhook requests failing verification: %v", h.sink.forged)
	}
	events := 0
	for _, who := range names {
		got := map[string]bool{}
		n := 0
		for _, path := range h.paths[who] {
			for i, p := range h.sink.got[path] {
				n++
				got[p.Data.MemoryID] = true
				if !readable(who, p.Data.GroupID) {
					t.Errorf("LEAK: %s's webhook %s received %s about %s, a space it may not read", who, path, p.Type, p.Data.GroupID)
				}
				raw := h.sink.raw[path][i]
				for _, s := range seeds {
					// A compaction's or reflection's event carries its sources' words.
					if strings.Contains(raw, s.word) && s.memory != p.Data.MemoryID && !slices.Contains(derived[p.Data.MemoryID], s.memory) {
						t.Errorf("LEAK: %s's webhook %s received %s's word %s in an event about %s: %s", who, path, s.space, s.word, p.Data.MemoryID, raw)
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("%s's webhooks received nothing", who)
		}
		for _, id := range must[who] {
			if !got[id] {
				t.Errorf("%s's webhooks received nothing about memory %s, which it may read", who, id)
			}
		}
		events += n
	}
	t.Logf("probe webhooks: %d events received by %d principals", events, len(names))
}
