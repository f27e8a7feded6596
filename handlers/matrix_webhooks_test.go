package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/memgate/memgate/access/accesstest"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/webhook"
)

// hookSink is a receiver of many webhooks (the matrix's, the probe's): one path per
// webhook, each request verified with its webhook's secret (Standard Webhooks).
type hookSink struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	secrets map[string]string            // path -> secret
	ids     map[string]string            // path -> webhook id
	got     map[string][]webhook.Payload // path -> what arrived verified
	raw     map[string][]string          // path -> the bodies that arrived verified
	forged  []string
	events  map[string]string // the matrix: column -> the subject of the event made about it
	sent    bool              // the matrix: the events are made and every delivery of them finished
}

func newHookSink(t *testing.T) *hookSink {
	h := &hookSink{t: t, secrets: map[string]string{}, ids: map[string]string{}, got: map[string][]webhook.Payload{},
		raw: map[string][]string{}, events: map[string]string{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		v, err := standardwebhooks.NewWebhook(h.secrets[r.URL.Path])
		if err == nil {
			err = v.Verify(body, r.Header)
		}
		var p webhook.Payload
		if err == nil {
			err = json.Unmarshal(body, &p)
		}
		if err != nil {
			h.forged = append(h.forged, r.URL.Path+": "+err.Error())
			rw.WriteHeader(http.StatusBadRequest)
			return
		}
		h.got[r.URL.Path] = append(h.got[r.URL.Path], p)
		h.raw[r.URL.Path] = append(h.raw[r.URL.Path], string(body))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// webhookBody is the registration of the webhook following a space column's space:
// its agent's for an agent's space, its team's, the audit webhook for system, and for
// the others (global, a shared space) one naming none, as none follows them.
func (w *world) webhookBody(c accesstest.Cell) (string, map[string]any) {
	path := "/" + c.Principal + "/" + c.Column
	body := map[string]any{"url": w.webhooks.srv.URL + path, "events": graph.MemoryEvents}
	agent, _, team := w.spaceArgs(c.Column)
	switch {
	case c.Column == "system":
		body["audit"], body["events"] = true, []string{graph.EventAccessDenied}
	case team != "":
		body["team"] = team
	case c.Column != "global" && !strings.HasSuffix(c.Column, "_shared"):
		body["agent_id"] = agent
	}
	return path, body
}

func (w *world) runSubscribe(cl client, c accesstest.Cell) string {
	path, body := w.webhookBody(c)
	status, out := cl.do("POST", "/v1/webhooks", body)
	if status != http.StatusCreated {
		return fmt.Sprint(status)
	}
	var h hookView
	if err := json.Unmarshal(out, &h); err != nil || !strings.HasPrefix(h.Secret, "whsec_") {
		return "registered without a secret: " + string(out)
	}
	w.webhooks.mu.Lock()
	w.webhooks.secrets[path], w.webhooks.ids[path] = h.Secret, h.ID
	w.webhooks.mu.Unlock()
	return "allow"
}

// runWebhookEvent: once, an event about each column's seed (memory.updated by the
// seed's writer; for system, a stranger's refused write: access.denied), sent by a
// deliverer of this world's webhooks until every delivery of them has finished; then
// each cell is whether its webhook received the event (verified) or dropped it unsent.
func (w *world) runWebhookEvent(cl client, c accesstest.Cell) string {
	path, body := w.webhookBody(c)
	w.webhooks.mu.Lock()
	id, subscribed := w.webhooks.ids[path]
	w.webhooks.mu.Unlock()
	if !subscribed {
		status, _ := cl.do("POST", "/v1/webhooks", body) // the refusal again
		return fmt.Sprint(status)
	}
	w.sendEvents()
	subject := w.webhooks.events[c.Column]
	w.webhooks.mu.Lock()
	got, forged := w.webhooks.got[path], w.webhooks.forged
	w.webhooks.mu.Unlock()
	if len(forged) > 0 {
		return "requests failing verification: " + strings.Join(forged, "; ")
	}
	received := 0
	for _, p := range got {
		if p.Data.MemoryID == subject || (p.Data.AuditEventID == subject && p.Type == graph.EventAccessDenied) {
			received++
		}
	}
	params := map[string]any{"hook": id, "subject": subject}
	dropped := neo4jtest.Count(w.t, `MATCH (d:WebhookDelivery {webhook_id: $hook, subject: $subject}) WHERE d.status = 'dropped' RETURN count(d)`, params)
	made := neo4jtest.Count(w.t, `MATCH (d:WebhookDelivery {webhook_id: $hook, subject: $subject}) RETURN count(d)`, params)
	switch {
	case received == 1 && dropped == 0:
		return "received"
	case received == 0 && dropped == 1:
		return "dropped"
	case received == 0 && made == 0 && w.m.Principals[c.Principal].Org() != "":
		// Another organization's webhook follows its own spaces only: the outbox makes
		// it no delivery of the world's event, which is as unsent as a dropped one.
		return "dropped"
	}
	return fmt.Sprintf("received %d times, %d deliveries made, %d dropped", received, made, dropped)
}

func (w *world) sendEvents() {
	if w.webhooks.sent {
		return
	}
	w.webhooks.sent = true
	var subjects []string
	for _, col := range w.m.Spaces {
		switch col {
		case "system":
			stranger := w.as("mallory-hooks", "trusted")
			if s, _ := stranger.do("POST", "/v1/memories", map[string]any{"agent_id": w.id("a"), "messages": "Not mine to write."}); s != http.StatusForbidden {
				w.t.Fatalf("a stranger's write to agent a: %d, want 403", s)
			}
			var events struct{ Events []struct{ ID string } }
			w.as("root", "admin").must(http.StatusOK, "GET", "/v1/audit?kind=namespace_denied&actor="+stranger.requester, nil, &events)
			if len(events.Events) != 1 {
				w.t.Fatalf("the stranger's refusal: %+v, want one event", events.Events)
			}
			w.webhooks.events[col] = events.Events[0].ID
		case "global", "a_shared":
			continue // no webhook follows them
		default:
			writer, _ := w.writer(col)
			if s, out := writer.patch(w.seeds[col], "", map[string]any{"tags": []string{"hooked"}}); s != http.StatusOK {
				w.t.Fatalf("the %s seed's writer changing its tags: %d %s", col, s, out)
			}
			w.webhooks.events[col] = w.seeds[col]
		}
		subjects = append(subjects, w.webhooks.events[col])
	}
	d := &webhook.Deliverer{Store: neo4jtest.DB(w.t), Service: w.svc, Guard: webhook.Guard{AllowLoopback: true},
		Log: neo4jtest.Logger(w.t), Workers: 8, Timeout: 5 * time.Second, Poll: 20 * time.Millisecond,
		BackoffMin: 20 * time.Millisecond, BackoffMax: 100 * time.Millisecond, Horizon: time.Minute, Scope: w.suffix}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	pending := `MATCH (d:WebhookDelivery) WHERE d.requester CONTAINS $mark AND d.subject IN $subjects AND d.status <> 'delivered'
	  AND d.status <> 'dropped' RETURN count(d)`
	params := map[string]any{"mark": w.suffix, "subjects": subjects}
	for deadline, wait := time.Now().Add(2*time.Minute), neo4jtest.FirstPoll; neo4jtest.Count(w.t, pending, params) != 0; wait = neo4jtest.Poll(wait) {
		if time.Now().After(deadline) {
			w.t.Fatal("the matrix's webhook deliveries did not finish")
		}
	}
}
