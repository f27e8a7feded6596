package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
	"github.com/memgate/memgate/webhook"
)

// hookWorld is an organization of its own, so that the deliverers and the ingestion a
// test runs touch its spaces only (their scope is the organization's prefix).
type hookWorld struct {
	t    *testing.T
	base string
	svc  *service.Service
	org  graph.Org
	mark string
}

func newHookWorld(t *testing.T, adjust func(*service.Service)) *hookWorld {
	t.Helper()
	mark := randomSuffix()
	org := "wh" + mark
	keys := []access.KeySpec{
		{Name: "backend-" + mark, SHA256: access.HashKey("kb-" + mark), Trusted: true, Org: org},
		{Name: "admin-" + mark, SHA256: access.HashKey("ka-" + mark), Trusted: true, Admin: true, Org: org},
	}
	w := &hookWorld{t: t, org: graph.Org(org), mark: mark}
	srv := newServerWith(t, keys, nil, func(s *service.Service) {
		w.svc = s
		if adjust != nil {
			adjust(s)
		}
	})
	w.base = srv.URL
	neo4jtest.Forget(t, mark)
	return w
}

func (w *hookWorld) as(name string) client {
	return client{t: w.t, base: w.base, key: "kb-" + w.mark, requester: name + "-" + w.mark}
}

func (w *hookWorld) admin() client {
	return client{t: w.t, base: w.base, key: "ka-" + w.mark, requester: "ops-" + w.mark}
}

func (w *hookWorld) scope() string { return w.org.Prefix() }

// agent creates an agent owned by c.
func (w *hookWorld) agent(c client, name string) string {
	id := name + "-" + w.mark
	c.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": id}, nil)
	return id
}

// deliver runs a deliverer over the world's spaces until the test ends (or stop).
// Backoff is short, so retries take milliseconds.
func (w *hookWorld) deliver(adjust func(*webhook.Deliverer)) (stop func()) {
	d := &webhook.Deliverer{Store: neo4jtest.DB(w.t), Service: w.svc, Guard: webhook.Guard{AllowLoopback: true},
		Log: neo4jtest.Logger(w.t), Workers: 4, Timeout: 2 * time.Second, Poll: 20 * time.Millisecond,
		BackoffMin: 20 * time.Millisecond, BackoffMax: 100 * time.Millisecond, Horizon: time.Minute, Scope: w.mark}
	if adjust != nil {
		adjust(d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	w.t.Cleanup(stop)
	return stop
}

// failOn is the offline extractor, except that it fails every episode whose content
// holds word: a memory that ends failed (ingest.max_attempts 1).
type failOn struct{ word string }

func (f failOn) Extract(ctx context.Context, ep *graph.Episode, previous []*graph.Episode) (*graph.Extracted, error) {
	if strings.Contains(ep.Content, f.word) {
		return nil, errors.New("scripted failure")
	}
	return extract.Heuristic{}.Extract(ctx, ep, previous)
}

// ingestHooked runs ingestion over the world's spaces, holding contradictions for
// review and failing memories that say FAILME at their first attempt.
func (w *hookWorld) ingest() {
	db := neo4jtest.DB(w.t)
	r := &extract.Runner{
		Queue: db, Extractor: failOn{"FAILME"}, Types: extract.DefaultEntityTypes,
		Resolver: &extract.Resolver{Know: db, Embedder: extract.Hashing{Dimensions: neo4jtest.Dimensions}, Now: time.Now, Review: true},
		Workers:  2, Lease: time.Minute, MaxAttempts: 1, Backoff: 20 * time.Millisecond, Poll: neo4jtest.RunnerPoll,
		Log: neo4jtest.Logger(w.t), Metrics: &extract.Metrics{}, Scope: w.scope(),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	w.t.Cleanup(func() { cancel(); <-done })
}

// receiver is a webhook endpoint in the test: it verifies every request with the
// Standard Webhooks library's verifier and the secret memgate gave, and keeps the
// verified ones. It answers with status (200 unless a test says otherwise).
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	secret string
	got    []webhook.Payload // verified, in arrival order, repeats included
	hits   int               // every request, verified or not
	forged []string          // requests that failed verification, and why
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t}
	r.status.Store(http.StatusOK)
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(rw http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hits++
	status := int(r.status.Load())
	if status != http.StatusOK {
		rw.WriteHeader(status)
		_, _ = rw.Write([]byte("receiver is down"))
		return
	}
	v, err := standardwebhooks.NewWebhook(r.secret)
	if err == nil {
		err = v.Verify(body, req.Header)
	}
	// The verifier is not a formality: the same request with one byte changed fails.
	if err == nil && v.Verify(append([]byte(" "), body...), req.Header) == nil {
		err = errors.New("a changed body verified too")
	}
	var p webhook.Payload
	if err == nil {
		err = json.Unmarshal(body, &p)
	}
	if err == nil && p.Data.EventID != req.Header.Get("webhook-id") {
		err = fmt.Errorf("data.event_id %s is not webhook-id %s", p.Data.EventID, req.Header.Get("webhook-id"))
	}
	if err != nil {
		r.forged = append(r.forged, err.Error())
		rw.WriteHeader(http.StatusBadRequest)
		return
	}
	r.got = append(r.got, p)
	rw.WriteHeader(http.StatusNoContent)
}

// payloads returns a copy of what arrived verified.
func (r *receiver) payloads() []webhook.Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.forged) > 0 {
		r.t.Errorf("requests that failed verification: %v", r.forged)
		r.forged = nil
	}
	return append([]webhook.Payload(nil), r.got...)
}

// wait polls until ok holds for what arrived.
func (r *receiver) wait(what string, ok func([]webhook.Payload) bool) []webhook.Payload {
	r.t.Helper()
	for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
		got := r.payloads()
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("waiting for %s; received %s", what, describeHooks(got))
		}
	}
}

func describeHooks(ps []webhook.Payload) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Type+" "+p.Data.MemoryID+p.Data.ConflictID+p.Data.AuditEventID)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// byEvent dedupes what arrived by event id, as a receiver should.
func byEvent(ps []webhook.Payload) map[string]webhook.Payload {
	out := map[string]webhook.Payload{}
	for _, p := range ps {
		out[p.Data.EventID] = p
	}
	return out
}

// of returns the payloads of kind about subject (a memory, conflict or audit event).
func of(ps []webhook.Payload, kind, subject string) []webhook.Payload {
	var out []webhook.Payload
	for _, p := range ps {
		if p.Type == kind && (subject == "" || p.Data.MemoryID == subject || p.Data.ConflictID == subject || p.Data.AuditEventID == subject) {
			out = append(out, p)
		}
	}
	return out
}

type hookView struct {
	ID             string     `json:"id"`
	URL            string     `json:"url"`
	Events         []string   `json:"events"`
	AgentID        string     `json:"agent_id"`
	Team           string     `json:"team"`
	Audit          bool       `json:"audit"`
	IncludeContent bool       `json:"include_content"`
	Status         string     `json:"status"`
	FailingSince   *time.Time `json:"failing_since"`
	Secret         string     `json:"secret"`
}

type deliveryOf struct {
	ID       string `json:"id"`
	EventID  string `json:"event_id"`
	Type     string `json:"type"`
	Subject  string `json:"subject"`
	Status   string `json:"status"`
	Attempts []struct {
		StatusCode int    `json:"status_code"`
		Error      string `json:"error"`
		DurationMS int64  `json:"duration_ms"`
	} `json:"attempts"`
}

// subscribe registers a webhook to r for c and gives r its secret.
func subscribe(c client, r *receiver, body map[string]any) hookView {
	c.t.Helper()
	body["url"] = r.srv.URL + "/hook"
	var h hookView
	c.must(http.StatusCreated, "POST", "/v1/webhooks", body, &h)
	if !strings.HasPrefix(h.Secret, "whsec_") {
		c.t.Fatalf("webhook %s answered secret %q, want whsec_...", h.ID, h.Secret)
	}
	r.mu.Lock()
	r.secret = h.Secret
	r.mu.Unlock()
	return h
}

func deliveries(c client, hook string) []deliveryOf {
	c.t.Helper()
	var out struct{ Items []deliveryOf }
	c.must(http.StatusOK, "GET", "/v1/webhooks/"+hook+"/deliveries?limit=100", nil, &out)
	return out.Items
}

func write(c client, agent, visibility, text string) string {
	c.t.Helper()
	var a added
	c.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "visibility": visibility,
		"messages": text}, &a)
	return a.ID
}

// TestWebhook_EveryKind: every event kind arrives signed, verified by the Standard
// Webhooks library with the secret given at registration, carrying the ids of what it
// is about; content only in the memory events of a webhook that asked for it. The
// owner's agent webhook receives no audit event and the admin's audit webhook no
// memory event.
func TestWebhook_EveryKind(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, nil)
	alice, bob, admin := w.as("alice"), w.as("bob"), w.admin()
	agent := w.agent(alice, "kinds")
	w.ingest()
	w.deliver(nil)
	memories, audit := newReceiver(t), newReceiver(t)
	hook := subscribe(alice, memories, map[string]any{"agent_id": agent, "events": graph.MemoryEvents, "include_content": true})
	subscribe(admin, audit, map[string]any{"audit": true, "events": []string{"access.denied"}})

	var first, moved added
	alice.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "Bob lives in Rome.",
		"reference_time": "2023-01-10T09:00:00Z"}, &first)
	waitStatus(t, alice, first.ID)
	alice.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent,
		"messages": "In March 2024 Bob moved to Berlin.", "reference_time": "2024-03-20T09:00:00Z"}, &moved)
	waitStatus(t, alice, moved.ID)
	var conflicts struct {
		Items []struct{ ID, EpisodeID string } `json:"items"`
	}
	alice.must(http.StatusOK, "GET", "/v1/conflicts?agent_id="+agent, nil, &conflicts)
	if len(conflicts.Items) != 1 {
		t.Fatalf("conflicts %+v, want the one of Rome and Berlin", conflicts.Items)
	}
	conflict := conflicts.Items[0].ID
	alice.must(http.StatusOK, "POST", "/v1/conflicts/"+conflict+"/resolve", map[string]any{"keep": "new"}, nil)
	failed := write(alice, agent, "private", "FAILME: this one cannot be extracted.")
	var stored added // without extraction: done at once
	alice.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "Bob's notes, kept as written.",
		"extract": false}, &stored)
	if s, body := alice.patch(first.ID, "", map[string]any{"tags": []string{"hooked"}}); s != http.StatusOK {
		t.Fatalf("PATCH: %d %s", s, body)
	}
	alice.must(http.StatusNoContent, "DELETE", "/v1/memories/"+first.ID, nil, nil)
	if s, _ := bob.do("POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "Bob writes here."}); s != http.StatusForbidden {
		t.Fatalf("bob writing alice's agent: %d, want 403", s)
	}

	got := memories.wait("every memory and conflict event", func(ps []webhook.Payload) bool {
		return len(of(ps, "memory.done", first.ID)) > 0 && len(of(ps, "memory.done", moved.ID)) > 0 &&
			len(of(ps, "conflict.opened", conflict)) > 0 && len(of(ps, "conflict.resolved", conflict)) > 0 &&
			len(of(ps, "memory.failed", failed)) > 0 && len(of(ps, "memory.updated", first.ID)) > 0 &&
			len(of(ps, "memory.deleted", first.ID)) > 0 && len(of(ps, "memory.done", stored.ID)) > 0
	})
	for _, p := range got {
		if p.Data.WebhookID != hook.ID || p.Data.GroupID != w.org.Private(agent).GroupID() || p.Data.Space != "private" || p.Timestamp.IsZero() {
			t.Errorf("%s: %+v, want webhook %s, alice's agent's private space and a time", p.Type, p.Data, hook.ID)
		}
		if p.Type == "access.denied" {
			t.Errorf("the agent's webhook received an audit event: %+v", p)
		}
	}
	done := of(got, "memory.done", first.ID)[0]
	if done.Data.Content == nil || *done.Data.Content != "Bob lives in Rome." || done.Data.AgentID != agent {
		t.Errorf("memory.done %+v: want the content (include_content, readable) and the agent", done.Data)
	}
	if d := of(got, "memory.deleted", first.ID)[0]; d.Data.Content != nil {
		t.Errorf("memory.deleted carries content %q", *d.Data.Content)
	}
	if c := of(got, "conflict.opened", conflict)[0]; c.Data.MemoryID != moved.ID || c.Data.Content != nil {
		t.Errorf("conflict.opened %+v: want the memory whose extraction found it, no content", c.Data)
	}

	denied := audit.wait("bob's refusal", func(ps []webhook.Payload) bool { return len(of(ps, "access.denied", "")) > 0 })
	for _, p := range denied {
		if p.Type != "access.denied" || p.Data.Actor != bob.requester || p.Data.Space != "system" ||
			p.Data.DeniedSpace != w.org.Private(agent).GroupID() || p.Data.Reason == "" || p.Data.AuditEventID != p.Data.EventID {
			t.Errorf("audit webhook received %+v, want bob's access.denied about alice's agent's space", p)
		}
	}
	var events struct{ Events []struct{ ID string } }
	admin.must(http.StatusOK, "GET", "/v1/audit?kind=namespace_denied&actor="+bob.requester, nil, &events)
	if len(events.Events) != 1 || events.Events[0].ID != denied[0].Data.AuditEventID {
		t.Errorf("audit log %+v; the webhook named %s", events.Events, denied[0].Data.AuditEventID)
	}
}

// TestWebhook_ReceiverDownThenBack: a receiver that answers 503 for a while gets, once
// it is back, every event exactly once per event id (none lost); the deliveries show
// each attempt and the receiver's answers.
func TestWebhook_ReceiverDownThenBack(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, nil)
	alice := w.as("alice")
	agent := w.agent(alice, "down")
	w.ingest()
	w.deliver(nil)
	r := newReceiver(t)
	r.status.Store(http.StatusServiceUnavailable)
	hook := subscribe(alice, r, map[string]any{"agent_id": agent, "events": []string{"memory.done"}})
	var ids []string
	for i := range 3 {
		ids = append(ids, write(alice, agent, "public", fmt.Sprintf("Note %d: Dana works at Initech.", i)))
	}
	// Down: every delivery is tried more than once, and answered 503.
	for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
		ds := deliveries(alice, hook.ID)
		retried := 0
		for _, d := range ds {
			if len(d.Attempts) >= 2 && d.Status == "pending" {
				retried++
			}
		}
		if retried == len(ids) && len(ds) == len(ids) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries while the receiver is down: %+v", ds)
		}
	}
	if got := r.payloads(); len(got) != 0 {
		t.Fatalf("a receiver answering 503 accepted %s", describeHooks(got))
	}
	r.status.Store(http.StatusOK)
	got := r.wait("every memory.done", func(ps []webhook.Payload) bool { return len(byEvent(ps)) >= len(ids) })
	unique := byEvent(got)
	if len(unique) != len(ids) {
		t.Errorf("%d distinct events, want %d: %s", len(unique), len(ids), describeHooks(got))
	}
	for _, id := range ids {
		if n := len(of(got, "memory.done", id)); n == 0 {
			t.Errorf("memory %s: no memory.done", id)
		}
	}
	for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
		ds := deliveries(alice, hook.ID)
		delivered := 0
		for _, d := range ds {
			if d.Status == "delivered" {
				delivered++
				last := d.Attempts[len(d.Attempts)-1]
				if last.StatusCode != http.StatusNoContent || last.Error != "" {
					t.Fatalf("delivered %s: last attempt %+v, want the receiver's 204", d.ID, last)
				}
				// The receiver's status, in memgate's words: never its answer's body.
				if a := d.Attempts[0]; a.StatusCode != http.StatusServiceUnavailable || a.Error != "the receiver answered HTTP 503" {
					t.Fatalf("delivered %s: first attempt %+v, want the 503 in memgate's words, without its answer", d.ID, a)
				}
			}
		}
		if delivered == len(ids) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries after the receiver came back: %+v", ds)
		}
	}
}

// TestWebhook_DeliveriesReadWhole: GET .../deliveries never shows a delivery half
// recorded. Neo4j applies a commit to its store record by record, and a plain read of
// a delivery being finished could see some of its attempt lists grown and not the
// others: the last attempt of a delivered delivery with no status and no error (how
// TestWebhook_ReceiverDownThenBack failed now and then). Here workers claim and finish
// the deliveries over and over, each attempt a 503, while the test reads them; every
// attempt read must be whole.
func TestWebhook_DeliveriesReadWhole(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, nil)
	alice := w.as("alice")
	agent := w.agent(alice, "whole")
	w.ingest()
	r := newReceiver(t)
	hook := subscribe(alice, r, map[string]any{"agent_id": agent, "events": []string{"memory.done"}})
	const events = 6
	for i := range events {
		write(alice, agent, "public", fmt.Sprintf("Note %d: Gil works at Hooli.", i))
	}
	for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; len(deliveries(alice, hook.ID)) < events; wait = neo4jtest.Poll(wait) {
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %+v, want %d", deliveries(alice, hook.ID), events)
		}
	}
	const answer = "HTTP 503: receiver is down"
	db := neo4jtest.DB(t)
	ctx, cancel := context.WithCancel(context.Background())
	var finished atomic.Int64
	var wg sync.WaitGroup
	failures := make(chan error, 10) // one per goroutine at most
	for i := range events {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker := fmt.Sprintf("hammer%d-%s", i, w.mark)
			for ctx.Err() == nil {
				claimed, err := db.ClaimDeliveries(ctx, worker, w.mark, time.Minute, 1)
				if err != nil {
					if ctx.Err() == nil {
						failures <- err
					}
					return
				}
				fs := make([]graph.Finish, 0, len(claimed))
				for _, c := range claimed {
					now := time.Now()
					fs = append(fs, graph.Finish{ID: c.Delivery.ID, Status: graph.DeliveryPending, Next: now,
						Attempt: &graph.Attempt{At: now.UTC(), StatusCode: http.StatusServiceUnavailable, Error: answer, Millis: 1}})
				}
				for _, err := range db.FinishDeliveries(context.Background(), worker, fs) {
					if err != nil {
						failures <- err
						return
					}
				}
				finished.Add(int64(len(fs)))
			}
		}()
	}
	whole := func(a graph.Attempt) bool {
		return a.StatusCode == http.StatusServiceUnavailable && a.Error == answer && a.Millis == 1
	}
	// Readers through the store, as fast as they can, and through the API below.
	var reads atomic.Int64
	vis := graph.Visible{GroupIDs: []string{w.org.Public(agent).GroupID()}}
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				ds, err := db.Deliveries(ctx, w.org, hook.ID, vis, 100)
				if err != nil {
					if ctx.Err() == nil {
						failures <- err
					}
					return
				}
				reads.Add(1)
				for _, d := range ds {
					for i, a := range d.Attempts {
						if !whole(a) {
							failures <- fmt.Errorf("delivery %s: attempt %d of %d is %+v, want a whole 503", d.ID, i+1, len(d.Attempts), a)
							return
						}
					}
				}
			}
		}()
	}
	stop := func() { cancel(); wg.Wait() }
	defer stop()
	// Until the workers have finished wholeFinishes attempts: a count, not a time, so a
	// busy machine races as many as a quiet one, only slower.
	deadline := time.Now().Add(2 * time.Minute)
	for ; finished.Load() < wholeFinishes && time.Now().Before(deadline) && len(failures) == 0; reads.Add(1) {
		for _, d := range deliveries(alice, hook.ID) {
			for i, a := range d.Attempts {
				if !whole(graph.Attempt{StatusCode: a.StatusCode, Error: a.Error, Millis: a.DurationMS}) {
					t.Fatalf("delivery %s over the API: attempt %d of %d is %+v, want a whole 503", d.ID, i+1, len(d.Attempts), a)
				}
			}
		}
	}
	stop()
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	if n := finished.Load(); n < wholeFinishes && !t.Failed() {
		t.Errorf("%d finishes in 2 minutes, during %d reads: want %d", n, reads.Load(), wholeFinishes)
	}
	t.Logf("%d reads of %d deliveries during %d finishes", reads.Load(), events, finished.Load())
}

// TestWebhook_FailingAfterHorizon: a delivery that fails until its horizon is given up
// (failed) and marks its webhook failing; the next delivered event makes it active.
func TestWebhook_FailingAfterHorizon(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, nil)
	alice := w.as("alice")
	agent := w.agent(alice, "horizon")
	w.ingest()
	w.deliver(func(d *webhook.Deliverer) { d.Horizon = 2 * time.Second })
	r := newReceiver(t)
	r.status.Store(http.StatusInternalServerError)
	hook := subscribe(alice, r, map[string]any{"agent_id": agent, "events": []string{"memory.done"}})
	lost := write(alice, agent, "public", "Erin lives in Lyon.")
	for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
		var h hookView
		alice.must(http.StatusOK, "GET", "/v1/webhooks/"+hook.ID, nil, &h)
		ds := deliveries(alice, hook.ID)
		if h.Status == "failing" && h.FailingSince != nil && len(ds) == 1 && ds[0].Status == "failed" {
			if len(ds[0].Attempts) < 2 {
				t.Errorf("given up after %d attempts, want retries first", len(ds[0].Attempts))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook %+v, deliveries %+v: want failing and failed", h, ds)
		}
	}
	r.status.Store(http.StatusOK)
	next := write(alice, agent, "public", "Erin works at Globex.")
	r.wait("the next event", func(ps []webhook.Payload) bool { return len(of(ps, "memory.done", next)) == 1 })
	for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
		var h hookView
		alice.must(http.StatusOK, "GET", "/v1/webhooks/"+hook.ID, nil, &h)
		if h.Status == "active" && h.FailingSince == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook %+v after a delivery, want active", h)
		}
	}
	if n := len(of(r.payloads(), "memory.done", lost)); n != 0 {
		t.Errorf("the given-up event arrived %d times", n)
	}
}

// TestWebhook_DeliversAfterRestart: the outbox is written with the change, so an event
// whose delivery had not begun when the process stopped, and one leased by a process
// that died mid-delivery, are both delivered by the next process, once. The first
// lease holder, come back late, records nothing over the delivery (a deliverer leases
// each batch under a name of its own for this).
func TestWebhook_DeliversAfterRestart(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, nil)
	alice := w.as("alice")
	agent := w.agent(alice, "restart")
	w.ingest()
	r := newReceiver(t)
	hook := subscribe(alice, r, map[string]any{"agent_id": agent, "events": []string{"memory.done"}})
	before := write(alice, agent, "public", "Fay lives in Kyoto.")
	waitStatus(t, alice, before)
	leased := write(alice, agent, "public", "Fay works at Nintendo.")
	waitStatus(t, alice, leased)
	// No deliverer ran: both wait in the outbox.
	ds := deliveries(alice, hook.ID)
	if len(ds) != 2 || ds[0].Status != "pending" || ds[1].Status != "pending" || len(ds[0].Attempts)+len(ds[1].Attempts) != 0 {
		t.Fatalf("deliveries before any deliverer: %+v, want two pending, untried", ds)
	}
	// A process that leased one of them died before sending it.
	claimed, err := neo4jtest.DB(t).ClaimDeliveries(context.Background(), "dead-"+w.mark, w.mark, 500*time.Millisecond, 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("leasing one delivery as a process about to die: %v, %v", claimed, err)
	}
	w.deliver(nil)
	r.wait("both events", func(ps []webhook.Payload) bool {
		return len(of(ps, "memory.done", before)) > 0 && len(of(ps, "memory.done", leased)) > 0
	})
	waitDelivered(t, alice, hook.ID, 2)
	if got := r.payloads(); len(got) != 2 {
		t.Errorf("received %s, want each event once", describeHooks(got))
	}
	stale := neo4jtest.DB(t).FinishDeliveries(context.Background(), "dead-"+w.mark,
		[]graph.Finish{{ID: claimed[0].Delivery.ID, Status: graph.DeliveryPending, Next: time.Now()}})
	if graph.ErrorCode(stale[0]) != graph.ECONFLICT {
		t.Errorf("an expired lease's holder recording its delivery: %v, want a conflict", stale[0])
	}
	waitDelivered(t, alice, hook.ID, 2)
}

// waitDelivered waits until n deliveries of hook are delivered and none is pending.
func waitDelivered(t *testing.T, c client, hook string, n int) {
	t.Helper()
	for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
		ds := deliveries(c, hook)
		delivered := 0
		for _, d := range ds {
			if d.Status == "delivered" {
				delivered++
			}
		}
		if delivered == n && len(ds) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %+v, want %d delivered", ds, n)
		}
	}
}

// TestWebhook_TwoReplicas: two deliverers over one database send each event once
// between them.
func TestWebhook_TwoReplicas(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, nil)
	alice := w.as("alice")
	agent := w.agent(alice, "replicas")
	w.ingest()
	r := newReceiver(t)
	hook := subscribe(alice, r, map[string]any{"agent_id": agent, "events": []string{"memory.done"}})
	w.deliver(nil)
	w.deliver(nil)
	items := []any{}
	for i := range 10 {
		items = append(items, map[string]any{"agent_id": agent, "visibility": "public", "messages": fmt.Sprintf("Gus %d lives in Oslo.", i)})
	}
	alice.must(http.StatusOK, "POST", "/v1/memories/batch", map[string]any{"items": items}, nil)
	waitDelivered(t, alice, hook.ID, 10)
	got := r.payloads()
	if len(got) != 10 || len(byEvent(got)) != 10 {
		t.Errorf("received %d requests for %d events, want each of 10 once: %s", len(got), len(byEvent(got)), describeHooks(got))
	}
}

// TestWebhook_RevokedShare: a subscriber receives an event only while it may see its
// space, decided when it is sent: a share grantee gets the agent's private events until
// the share is revoked, then none (the delivery is dropped unsent), while the public
// ones go on; a requester the agent was never shared with gets the public ones only.
func TestWebhook_RevokedShare(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, nil)
	alice, bob, carol := w.as("alice"), w.as("bob"), w.as("carol")
	agent := w.agent(alice, "shared")
	alice.must(http.StatusNoContent, "PUT", "/v1/agents/"+agent+"/shares/"+bob.requester, nil, nil)
	w.ingest()
	w.deliver(nil)
	forBob, forCarol := newReceiver(t), newReceiver(t)
	subscribe(bob, forBob, map[string]any{"agent_id": agent, "events": []string{"memory.done"}, "include_content": true})
	subscribe(carol, forCarol, map[string]any{"agent_id": agent, "events": []string{"memory.done"}, "include_content": true})

	shared := write(alice, agent, "private", "Hal lives in Quito.")
	got := forBob.wait("the shared private memory", func(ps []webhook.Payload) bool { return len(of(ps, "memory.done", shared)) > 0 })
	if c := of(got, "memory.done", shared)[0].Data.Content; c == nil || *c != "Hal lives in Quito." {
		t.Errorf("bob's memory.done content %v, want the memory's (he may read it)", c)
	}
	alice.must(http.StatusNoContent, "DELETE", "/v1/agents/"+agent+"/shares/"+bob.requester, nil, nil)
	after := write(alice, agent, "private", "Hal works at Umbrella.")
	public := write(alice, agent, "public", "Hal likes tea.")
	forBob.wait("the public memory", func(ps []webhook.Payload) bool { return len(of(ps, "memory.done", public)) > 0 })
	forCarol.wait("the public memory", func(ps []webhook.Payload) bool { return len(of(ps, "memory.done", public)) > 0 })
	dropped := `MATCH (d:WebhookDelivery {subject: $id}) WHERE d.status = 'dropped' RETURN count(d)`
	for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; neo4jtest.Count(t, dropped, map[string]any{"id": after}) != 2; wait = neo4jtest.Poll(wait) {
		if time.Now().After(deadline) {
			t.Fatal("the private memory's deliveries to bob (revoked) and carol (never shared) were not dropped")
		}
	}
	if n := len(of(forBob.payloads(), "memory.done", after)); n != 0 {
		t.Errorf("bob received %d events about the private space after the share was revoked", n)
	}
	for _, id := range []string{shared, after} {
		if n := len(of(forCarol.payloads(), "memory.done", id)); n != 0 {
			t.Errorf("carol, never shared, received memory.done of private memory %s", id)
		}
	}
	// What bob may no longer see is not listed to him either.
	var hooks struct{ Items []hookView }
	bob.must(http.StatusOK, "GET", "/v1/webhooks", nil, &hooks)
	for _, d := range deliveries(bob, hooks.Items[0].ID) {
		if d.Subject == shared || d.Subject == after {
			t.Errorf("bob's deliveries list %+v about the private space", d)
		}
	}
}

// TestWebhook_SSRF: a URL whose host resolves to a loopback, private, link-local,
// shared, unspecified, multicast or reserved address (IPv4-translated and site-local
// IPv6 included), or does not resolve, is refused at registration with one message
// whatever the reason, so registering tells nothing of what a name resolves to; with
// loopback allowed (development and tests) the others stay refused.
func TestWebhook_SSRF(t *testing.T) {
	t.Parallel()
	// Names resolve from /etc/hosts alone: a made-up one asks no DNS server.
	noDNS := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS server in this test")
	}}
	strict, loopback := webhook.Guard{Resolver: noDNS}, webhook.Guard{AllowLoopback: true, Resolver: noDNS}
	guard := strict
	w := newHookWorld(t, func(s *service.Service) {
		s.CheckWebhookURL = func(ctx context.Context, u string) error { return guard.CheckURL(ctx, u) }
	})
	alice := w.as("alice")
	agent := w.agent(alice, "ssrf")
	register := func(u string) (int, string) {
		s, body := alice.do("POST", "/v1/webhooks", map[string]any{"url": u, "agent_id": agent, "events": []string{"memory.done"}})
		var e struct{ Error struct{ Message string } }
		_ = json.Unmarshal(body, &e)
		parsed, _ := url.Parse(u)
		host := parsed.Hostname()
		if ip, err := netip.ParseAddr(host); err == nil {
			host = ip.Unmap().String() // as memgate keeps it
		}
		return s, strings.ReplaceAll(e.Error.Message, host, "HOST")
	}
	refusedURLs := []string{"http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/", "http://192.168.0.1/", "http://172.16.0.1/",
		"http://0.0.0.0/", "http://100.100.100.200/", "http://[fe80::1]/", "http://224.0.0.1/", "http://[::ffff:0:7f00:1]/",
		"http://[fec0::1]/", "http://no-such-host.invalid/"}
	message := ""
	for _, u := range append([]string{"http://127.0.0.1:9/hook", "http://localhost:9/hook", "http://[::1]/hook", "http://[::ffff:127.0.0.1]/"}, refusedURLs...) {
		s, said := register(u)
		if s != http.StatusBadRequest || !strings.Contains(said, "may reach") {
			t.Errorf("registering %s: %d %q, want 400", u, s, said)
		}
		if message == "" {
			message = said
		} else if said != message {
			t.Errorf("registering %s says %q, another refused URL %q: want the same words for every reason", u, said, message)
		}
	}
	guard = loopback
	for _, u := range refusedURLs {
		if s, said := register(u); s != http.StatusBadRequest {
			t.Errorf("with loopback allowed, registering %s: %d %q, want 400", u, s, said)
		}
	}
	var hooks struct{ Items []hookView }
	alice.must(http.StatusOK, "GET", "/v1/webhooks", nil, &hooks)
	if len(hooks.Items) != 0 {
		t.Fatalf("refused URLs were stored: %+v", hooks.Items)
	}
	g := webhook.Guard{}
	if err := g.CheckURL(context.Background(), "http://93.184.215.14/"); err != nil {
		t.Errorf("a public address is refused: %v", err)
	}
}

// TestWebhook_DialTime: the deliverer checks the address it dials, not only the one
// registration saw; it follows no redirect; a slow receiver is cut at the timeout.
func TestWebhook_DialTime(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, nil)
	alice := w.as("alice")
	agent := w.agent(alice, "dial")
	w.ingest()
	refused, redirecting, target, slow := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
	redirecting.srv.Config.Handler = http.RedirectHandler(target.srv.URL+"/hook", http.StatusTemporaryRedirect)
	release := make(chan struct{})
	slow.srv.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		select {
		case <-req.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	hRefused := subscribe(alice, refused, map[string]any{"agent_id": agent, "events": []string{"memory.done"}})
	hRedirect := subscribe(alice, redirecting, map[string]any{"agent_id": agent, "events": []string{"memory.done"}})
	hSlow := subscribe(alice, slow, map[string]any{"agent_id": agent, "events": []string{"memory.done"}})
	// This deliverer's guard refuses loopback, where every receiver here listens: as
	// if their names resolved elsewhere since registration.
	strict := w.deliver(func(d *webhook.Deliverer) { d.Guard = webhook.Guard{} })
	id := write(alice, agent, "public", "Ida lives in Rome.")
	waitAttempt := func(hook string, ok func(deliveryOf) bool) deliveryOf {
		t.Helper()
		for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
			for _, d := range deliveries(alice, hook) {
				if d.Subject == id && ok(d) {
					return d
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("webhook %s: deliveries %+v", hook, deliveries(alice, hook))
			}
		}
	}
	d := waitAttempt(hRefused.ID, func(d deliveryOf) bool { return len(d.Attempts) > 0 })
	if a := d.Attempts[0]; a.StatusCode != 0 || a.Error != "the receiver's address is one webhooks may not reach" {
		t.Errorf("dialling a loopback receiver: attempt %+v, want refused before connecting, in memgate's words", a)
	}
	strict()
	// Deleted with its pending delivery, which the next deliverer (allowing loopback)
	// would send.
	alice.must(http.StatusNoContent, "DELETE", "/v1/webhooks/"+hRefused.ID, nil, nil)
	w.deliver(func(d *webhook.Deliverer) { d.Timeout = 300 * time.Millisecond })
	d = waitAttempt(hRedirect.ID, func(d deliveryOf) bool {
		for _, a := range d.Attempts {
			if a.StatusCode == http.StatusTemporaryRedirect {
				return true
			}
		}
		return false
	})
	d = waitAttempt(hSlow.ID, func(d deliveryOf) bool {
		for _, a := range d.Attempts {
			if a.StatusCode == 0 && a.Error == "the receiver did not answer in time" {
				return true
			}
		}
		return false
	})
	for _, a := range d.Attempts {
		if a.DurationMS > 2000 {
			t.Errorf("a slow receiver held an attempt %d ms, past the 300 ms timeout", a.DurationMS)
		}
	}
	if got := refused.payloads(); len(got) != 0 {
		t.Errorf("the refused receiver got %s", describeHooks(got))
	}
	if got := target.payloads(); len(got) != 0 {
		t.Errorf("the redirect was followed: its target got %s", describeHooks(got))
	}
}

// TestWebhook_Routes: what registration refuses (every field checked, unknown ones
// refused), who may register what, and that a webhook is its registrant's only: get,
// list, deliveries and delete answer 404 to anyone else, and the secret is shown once.
func TestWebhook_Routes(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, nil)
	alice, bob, admin := w.as("alice"), w.as("bob"), w.admin()
	agent := w.agent(alice, "routes")
	team := "crew-" + w.mark
	admin.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
	admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+alice.requester, map[string]any{"role": "writer"}, nil)
	url := "http://127.0.0.1:9/hook"
	for _, c := range []struct {
		name      string
		as        client
		body      map[string]any
		malformed bool
		status    int
	}{
		{"no target", alice, map[string]any{"url": url, "events": []string{"memory.done"}}, false, 400},
		{"two targets", alice, map[string]any{"url": url, "agent_id": agent, "team": team, "events": []string{"memory.done"}}, false, 400},
		{"no events", alice, map[string]any{"url": url, "agent_id": agent, "events": []string{}}, false, 400},
		{"an event twice", alice, map[string]any{"url": url, "agent_id": agent, "events": []string{"memory.done", "memory.done"}}, false, 400},
		{"an unknown event", alice, map[string]any{"url": url, "agent_id": agent, "events": []string{"memory.eaten"}}, true, 400},
		{"audit events for an agent", alice, map[string]any{"url": url, "agent_id": agent, "events": []string{"access.denied"}}, false, 400},
		{"memory events for audit", admin, map[string]any{"url": url, "audit": true, "events": []string{"memory.done"}}, false, 400},
		{"no url", alice, map[string]any{"agent_id": agent, "events": []string{"memory.done"}}, true, 400},
		{"not http", alice, map[string]any{"url": "ftp://example.com/x", "agent_id": agent, "events": []string{"memory.done"}}, false, 400},
		{"user information", alice, map[string]any{"url": "http://u:p@example.com/", "agent_id": agent, "events": []string{"memory.done"}}, false, 400},
		{"relative", alice, map[string]any{"url": "/hook", "agent_id": agent, "events": []string{"memory.done"}}, false, 400},
		{"an unknown field", alice, map[string]any{"url": url, "agent_id": agent, "events": []string{"memory.done"}, "secret": "mine"}, true, 400},
		{"a bad agent id", alice, map[string]any{"url": url, "agent_id": "Not An Id", "events": []string{"memory.done"}}, false, 400},
		{"an agent that does not exist", alice, map[string]any{"url": url, "agent_id": "ghost-" + w.mark, "events": []string{"memory.done"}}, false, 404},
		{"a team bob cannot see", bob, map[string]any{"url": url, "team": team, "events": []string{"memory.done"}}, false, 404},
		{"audit without an admin key", alice, map[string]any{"url": url, "audit": true, "events": []string{"access.denied"}}, false, 403},
		{"the owner of the agent", alice, map[string]any{"url": url, "agent_id": agent, "events": []string{"memory.done"}}, false, 201},
		{"another requester, the same url for the agent", bob, map[string]any{"url": url, "agent_id": agent, "events": []string{"memory.done"}}, false, 409},
		{"another requester, the agent's public space", bob, map[string]any{"url": url + "/bob", "agent_id": agent, "events": []string{"memory.done"}}, false, 201},
		{"a member of the team", alice, map[string]any{"url": url, "team": team, "events": []string{"conflict.opened"}}, false, 201},
		{"an admin, audit", admin, map[string]any{"url": url, "audit": true, "events": []string{"access.denied"}}, false, 201},
	} {
		var s int
		var body []byte
		if c.malformed {
			s, body = c.as.sendMalformed("POST", "/v1/webhooks", c.body)
		} else {
			s, body = c.as.do("POST", "/v1/webhooks", c.body)
		}
		if s != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, s, body, c.status)
		}
	}
	var mine, bobs, admins struct{ Items []hookView }
	alice.must(http.StatusOK, "GET", "/v1/webhooks", nil, &mine)
	bob.must(http.StatusOK, "GET", "/v1/webhooks", nil, &bobs)
	admin.must(http.StatusOK, "GET", "/v1/webhooks", nil, &admins)
	if len(mine.Items) != 2 || len(bobs.Items) != 1 || len(admins.Items) != 1 || !admins.Items[0].Audit {
		t.Fatalf("lists: alice %+v, bob %+v, admin %+v", mine.Items, bobs.Items, admins.Items)
	}
	for _, h := range append(append(mine.Items, bobs.Items...), admins.Items...) {
		if h.Secret != "" {
			t.Errorf("list shows the secret of %s", h.ID)
		}
	}
	hook := mine.Items[0].ID
	var got hookView
	alice.must(http.StatusOK, "GET", "/v1/webhooks/"+hook, nil, &got)
	if got.Secret != "" || got.AgentID != agent {
		t.Errorf("GET %+v: want alice's agent webhook without its secret", got)
	}
	for _, path := range []string{"/v1/webhooks/" + hook, "/v1/webhooks/" + hook + "/deliveries", "/v1/webhooks/" + admins.Items[0].ID} {
		if s, _ := bob.do("GET", path, nil); s != http.StatusNotFound {
			t.Errorf("bob GET %s: %d, want 404", path, s)
		}
	}
	if s, _ := bob.do("DELETE", "/v1/webhooks/"+hook, nil); s != http.StatusNotFound {
		t.Errorf("bob deleting alice's webhook: %d, want 404", s)
	}
	if s, _ := alice.do("GET", "/v1/webhooks/not-a-uuid", nil); s != http.StatusNotFound {
		t.Errorf("GET a malformed id: %d, want 404", s)
	}
	if s, _ := alice.sendMalformed("GET", "/v1/webhooks/"+hook+"/deliveries?limit=x", nil); s != http.StatusBadRequest {
		t.Errorf("deliveries?limit=x: %d, want 400", s)
	}
	if s, _ := alice.sendMalformed("GET", "/v1/webhooks/"+hook+"/deliveries?since=1", nil); s != http.StatusBadRequest {
		t.Errorf("deliveries with an unknown parameter: %d, want 400", s)
	}
	alice.must(http.StatusNoContent, "DELETE", "/v1/webhooks/"+hook, nil, nil)
	if s, _ := alice.do("GET", "/v1/webhooks/"+hook, nil); s != http.StatusNotFound {
		t.Errorf("a deleted webhook: %d, want 404", s)
	}
}

// TestWebhook_ErasedWithItsSubject: deleting an agent deletes the webhooks following it
// and the pending deliveries about its spaces; erasing a requester deletes its webhooks;
// dissolving a team, the webhooks following it.
func TestWebhook_ErasedWithItsSubject(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, nil)
	alice, bob, admin := w.as("alice"), w.as("bob"), w.admin()
	agent := w.agent(alice, "goes")
	other := w.agent(bob, "kept")
	w.ingest()
	r := newReceiver(t)
	onAgent := subscribe(alice, r, map[string]any{"agent_id": agent, "events": []string{"memory.done"}})
	bobs := subscribe(bob, r, map[string]any{"agent_id": other, "events": []string{"memory.done"}})
	waitStatus(t, alice, write(alice, agent, "private", "Jo lives in Lima."))
	pending := `MATCH (d:WebhookDelivery) WHERE d.group_id IN $groups RETURN count(d)`
	groups := map[string]any{"groups": []string{w.org.Private(agent).GroupID(), w.org.Public(agent).GroupID()}}
	if n := neo4jtest.Count(t, pending, groups); n != 1 {
		t.Fatalf("%d deliveries about the agent's spaces before the erasure, want 1", n)
	}
	alice.must(http.StatusOK, "DELETE", "/v1/agents/"+agent, nil, nil)
	if s, _ := alice.do("GET", "/v1/webhooks/"+onAgent.ID, nil); s != http.StatusNotFound {
		t.Errorf("the deleted agent's webhook: %d, want 404", s)
	}
	if n := neo4jtest.Count(t, pending, groups); n != 0 {
		t.Errorf("%d deliveries about the deleted agent's spaces remain", n)
	}
	admin.must(http.StatusOK, "DELETE", "/v1/requesters/"+bob.requester, nil, nil)
	if n := neo4jtest.Count(t, `MATCH (w:Webhook {id: $id}) RETURN count(w)`, map[string]any{"id": bobs.ID}); n != 0 {
		t.Errorf("the erased requester's webhook remains")
	}
	team := "crew-" + w.mark
	admin.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
	admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+alice.requester, map[string]any{"role": "writer"}, nil)
	onTeam := subscribe(alice, r, map[string]any{"team": team, "events": []string{"memory.done"}})
	admin.must(http.StatusOK, "DELETE", "/v1/teams/"+team, nil, nil)
	if s, _ := alice.do("GET", "/v1/webhooks/"+onTeam.ID, nil); s != http.StatusNotFound {
		t.Errorf("the dissolved team's webhook: %d, want 404", s)
	}

	// A refusal of mallory's reaches the audit webhook; erasing mallory rewrites the
	// delivery, sent or not, with the pseudonym the audit event now carries.
	subscribe(admin, r, map[string]any{"audit": true, "events": []string{"access.denied"}})
	mallory := w.as("mallory")
	if s, _ := mallory.do("POST", "/v1/memories", map[string]any{"agent_id": w.agent(alice, "kept2"), "messages": "x"}); s != http.StatusForbidden {
		t.Fatalf("mallory's write to alice's agent: %d, want 403", s)
	}
	byActor := `MATCH (d:WebhookDelivery {kind: 'access.denied'}) WHERE d.actor = $id RETURN count(d)`
	if n := neo4jtest.Count(t, byActor, map[string]any{"id": mallory.requester}); n != 1 {
		t.Fatalf("%d audit deliveries name mallory before the erasure, want 1", n)
	}
	admin.must(http.StatusOK, "DELETE", "/v1/requesters/"+mallory.requester, nil, nil)
	if n := neo4jtest.Count(t, byActor, map[string]any{"id": mallory.requester}); n != 0 {
		t.Errorf("%d audit deliveries still name mallory after the erasure", n)
	}
	pseudonymized := `MATCH (d:WebhookDelivery {kind: 'access.denied', group_id: $system})
		MATCH (a:AuditEvent {id: d.event_id}) WHERE d.actor = a.actor AND a.actor STARTS WITH 'erased-' RETURN count(d)`
	if n := neo4jtest.Count(t, pseudonymized, map[string]any{"system": w.org.System().GroupID()}); n != 1 {
		t.Errorf("%d audit deliveries carry the pseudonym their audit event carries, want 1", n)
	}
}

// TestWebhook_FanOutBounded: one host key naming many requesters registers at most
// service.MaxWebhooksPerTarget webhooks following one agent, whatever URLs and
// requesters it names, so one write makes it send at most that many; a second webhook
// of the key to the same URL about the same agent, whoever asks, is refused (409) as
// the identical target it is (naming the webhook to its own requester only).
func TestWebhook_FanOutBounded(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, nil)
	alice := w.as("alice")
	agent := w.agent(alice, "fan")
	body := func(i int) map[string]any {
		return map[string]any{"url": fmt.Sprintf("http://127.0.0.1:9/fan/%d", i), "agent_id": agent, "events": []string{"memory.done"}}
	}
	stored := 0
	for i := range service.MaxWebhooksPerTarget + 5 {
		s, out := w.as(fmt.Sprintf("fan%d", i)).do("POST", "/v1/webhooks", body(i))
		switch {
		case s == http.StatusCreated:
			stored++
		case s != http.StatusBadRequest || !strings.Contains(string(out), "following the same agent"):
			t.Errorf("registration %d: %d %s, want 201 or 400 for the key's bound", i, s, out)
		}
	}
	if stored != service.MaxWebhooksPerTarget {
		t.Errorf("one key stored %d webhooks following one agent, want %d", stored, service.MaxWebhooksPerTarget)
	}
	other := w.agent(alice, "fan-other")
	first := map[string]any{"url": "http://127.0.0.1:9/same", "agent_id": other, "events": []string{"memory.done"}}
	var hook struct{ ID string }
	alice.must(http.StatusCreated, "POST", "/v1/webhooks", first, &hook)
	again := map[string]any{"url": "http://127.0.0.1:9/same", "agent_id": other, "events": []string{"memory.failed"}}
	if s, out := alice.do("POST", "/v1/webhooks", again); s != http.StatusConflict || !strings.Contains(string(out), hook.ID) {
		t.Errorf("the same requester's second webhook to the same URL and agent: %d %s, want 409 naming its webhook", s, out)
	}
	if s, out := w.as("bob").do("POST", "/v1/webhooks", again); s != http.StatusConflict || strings.Contains(string(out), hook.ID) {
		t.Errorf("another requester of the key, to the same URL and agent: %d %s, want 409 naming no webhook", s, out)
	}
	// Another spelling of the same URL is the same target.
	for _, u := range []string{"HTTP://127.0.0.1:9/same", "http://127.0.0.1:09/same", "http://127.0.0.1:9/same?", "http://127.0.0.1:9/./same",
		"http://127.0.0.1:9/%73ame", "http://127.0.0.1:9/x/../same", "http://127.0.0.1:9/x/%2e%2E/same", "http://[::ffff:127.0.0.1]:9/same"} {
		spelt := map[string]any{"url": u, "agent_id": other, "events": []string{"memory.done"}}
		if s, out := alice.do("POST", "/v1/webhooks", spelt); s != http.StatusConflict || !strings.Contains(string(out), hook.ID) {
			t.Errorf("the same URL spelt %s: %d %s, want 409 naming the webhook", u, s, out)
		}
	}
	var view hookView
	alice.must(http.StatusCreated, "POST", "/v1/webhooks", map[string]any{"url": "HTTP://127.0.0.1:0080/Other/./Path?q=1", "agent_id": other,
		"events": []string{"memory.done"}}, &view)
	if view.URL != "http://127.0.0.1/Other/Path?q=1" {
		t.Errorf("a webhook registered as HTTP://127.0.0.1:0080/Other/./Path?q=1 is kept as %s", view.URL)
	}
}
