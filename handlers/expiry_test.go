package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// TestExpiry: a memory whose expires_at passes is gone from every read path at once,
// with the facts and entities only it supports, while a fact another memory also
// supports stays; the sweeper then erases it, once, however many sweep. The memory is
// written to expire in an hour and shown on every route; then its expires_at is
// updated to 2 s ahead, which the facts and entities it supports follow.
func TestExpiry(t *testing.T) {
	t.Parallel()
	var svc *service.Service
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) { svc = s })
	suffix := randomSuffix()
	neo4jtest.Forget(t, suffix)
	agent := "exp-agent-" + suffix
	owner := client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: "exp-owner-" + suffix}
	admin := client{t: t, base: srv.URL, key: matrixKeys["admin"], requester: "exp-root-" + suffix}
	owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	ingest(t, "agent-"+agent+"-")

	add := func(text string, expiresAt *time.Time) string {
		body := map[string]any{"agent_id": agent, "messages": text}
		if expiresAt != nil {
			body["expires_at"] = expiresAt.Format(time.RFC3339Nano)
		}
		var a added
		owner.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
		return a.ID
	}
	// The lasting memory is ingested first, so the expiring one adds its support to
	// the fact both state.
	lasting := add("Alice works at Acme.", nil)
	waitStatus(t, owner, lasting)
	later := time.Now().Add(time.Hour)
	ephemeral := add("Carol lives in Lisbon. Alice works at Acme.", &later)
	waitStatus(t, owner, ephemeral)
	session := mcpSession(t, srv.URL, matrixKeys["trusted"], owner.requester)

	search := func(extra map[string]any) searchResult {
		body := map[string]any{"agent_id": agent, "query": "Carol Lisbon Alice Acme"}
		for k, v := range extra {
			body[k] = v
		}
		var r searchResult
		owner.must(http.StatusOK, "POST", "/v1/memories/search", body, &r)
		return r
	}
	before := search(nil)
	var carolFact factHit
	for _, f := range before.Facts {
		if f.Source.Name == "Carol" {
			carolFact = f
		}
	}
	carol := before.entity("Carol")
	if carolFact.ID == "" || carol.ID == "" || !strings.Contains(before.targets(), "Alice WORKS_AT Acme") {
		t.Fatalf("before expiry the search found %q and entities %+v", before.targets(), before.Entities)
	}

	// Every read path, as the owner sees it: visible is whether the expiring memory,
	// its fact about Carol and Carol herself should show.
	type route struct {
		name  string
		shows func() bool
	}
	episodeIn := func(page struct{ Items []memory }) bool {
		for _, m := range page.Items {
			if m.ID == ephemeral {
				return true
			}
		}
		return false
	}
	status := func(method, path string) int { s, _ := owner.do(method, path, nil); return s }
	routes := []route{
		{"GET /v1/memories/{id}", func() bool { return status("GET", "/v1/memories/"+ephemeral) == http.StatusOK }},
		{"GET /v1/memories?agent_id", func() bool {
			var page struct{ Items []memory }
			owner.must(http.StatusOK, "GET", "/v1/memories?limit=100&agent_id="+agent, nil, &page)
			return episodeIn(page)
		}},
		{"GET /v1/memories?space=private", func() bool {
			var page struct{ Items []memory }
			owner.must(http.StatusOK, "GET", "/v1/memories?limit=100&space=private&agent_id="+agent, nil, &page)
			return episodeIn(page)
		}},
		{"search episodes", func() bool {
			for _, e := range search(nil).Episodes {
				if e.ID == ephemeral {
					return true
				}
			}
			return false
		}},
		{"search facts", func() bool { return strings.Contains(search(nil).targets(), "Carol") }},
		{"search facts include_expired", func() bool {
			return strings.Contains(search(map[string]any{"include_expired": true}).targets(), "Carol")
		}},
		{"search facts as_of", func() bool {
			return strings.Contains(search(map[string]any{"as_of": time.Now().Format(time.RFC3339Nano)}).targets(), "Carol")
		}},
		{"search entities", func() bool { return search(nil).entity("Carol").ID != "" }},
		{"search around Carol", func() bool {
			s, _ := owner.do("POST", "/v1/memories/search", map[string]any{"agent_id": agent, "query": "Lisbon", "center_entity_id": carol.ID})
			return s == http.StatusOK
		}},
		{"GET /v1/facts?agent_id", func() bool {
			var page struct{ Items []factHit }
			owner.must(http.StatusOK, "GET", "/v1/facts?limit=100&agent_id="+agent, nil, &page)
			for _, f := range page.Items {
				if f.ID == carolFact.ID {
					return true
				}
			}
			return false
		}},
		{"GET /v1/facts/{id}", func() bool { return status("GET", "/v1/facts/"+carolFact.ID) == http.StatusOK }},
		{"GET /v1/entities/{id}", func() bool { return status("GET", "/v1/entities/"+carol.ID) == http.StatusOK }},
		{"POST /v1/memories/{id}/retry", func() bool { return status("POST", "/v1/memories/"+ephemeral+"/retry") != http.StatusNotFound }},
		{"MCP get_memory", func() bool {
			var v memory
			return callTool(t, session, "get_memory", map[string]any{"id": ephemeral}, &v)
		}},
		{"MCP list_memories", func() bool {
			var page struct{ Items []memory }
			callTool(t, session, "list_memories", map[string]any{"agent_id": agent, "limit": 100}, &page)
			return episodeIn(page)
		}},
		{"MCP search_memory", func() bool {
			var r searchResult
			callTool(t, session, "search_memory", map[string]any{"agent_id": agent, "query": "Carol Lisbon"}, &r)
			return strings.Contains(r.targets(), "Carol") || r.entity("Carol").ID != ""
		}},
	}
	for _, r := range routes {
		if !r.shows() {
			t.Errorf("before expiry, %s does not show the memory", r.name)
		}
	}
	expiresAt := time.Now().Add(5 * time.Second)
	var updated struct {
		ExpiresAt time.Time `json:"expires_at"`
	}
	owner.must(http.StatusOK, "PATCH", "/v1/memories/"+ephemeral, map[string]any{"expires_at": expiresAt.Format(time.RFC3339Nano)}, &updated)
	if !updated.ExpiresAt.Equal(expiresAt) {
		t.Fatalf("expires_at after the update: %v, want %v", updated.ExpiresAt, expiresAt)
	}

	// More memories for the sweepers, one added through MCP; they need no ingestion.
	// They expire with the first, which the test waits for anyway: a busy machine
	// has its five seconds to write them (two were not always enough in make test).
	notesExpire := expiresAt
	var notes []string
	for i := range 4 {
		notes = append(notes, add(fmt.Sprintf("Dana lives in Porto %d.", i), &notesExpire))
	}
	var viaMCP added
	if !callTool(t, session, "add_memory", map[string]any{"agent_id": agent, "content": "Dana lives in Faro.",
		"expires_at": notesExpire.Format(time.RFC3339Nano)}, &viaMCP) {
		t.Fatalf("MCP add_memory with expires_at: %+v", viaMCP)
	}
	notes = append(notes, viaMCP.ID)

	// From expires_at on, nothing of it on any route, without waiting for the sweeper.
	waitNotFound(t, owner, ephemeral, "after it expired")
	for _, r := range routes {
		if r.shows() {
			t.Errorf("after expiry, %s still shows the memory", r.name)
		}
	}
	if got := search(nil).targets(); !strings.Contains(got, "Alice WORKS_AT Acme") {
		t.Errorf("the fact the lasting memory also supports is gone: %q", got)
	}
	waitNotFound(t, owner, viaMCP.ID, "after it expired (added over MCP)")

	// The sweeper erases the expired memories; two at once erase and audit each once.
	sweepTwice(t, svc)
	for _, id := range append([]string{ephemeral}, notes...) {
		if n := neo4jtest.Count(t, "MATCH (e:Episodic {uuid: $id}) RETURN count(e)", map[string]any{"id": id}); n != 0 {
			t.Errorf("memory %s is still stored after the sweep", id)
		}
		var events struct {
			Events []struct{ Kind, Actor, Space string }
		}
		admin.must(http.StatusOK, "GET", "/v1/audit?kind=expired&subject="+id, nil, &events)
		if len(events.Events) != 1 || events.Events[0].Actor != service.Sweeper || events.Events[0].Space != "agent-"+agent+"-private" {
			t.Errorf("audit of the expiry of %s: %+v, want one expired event by the sweeper", id, events.Events)
		}
	}
	if n := neo4jtest.Count(t, "MATCH (n:Entity {uuid: $id}) RETURN count(n)", map[string]any{"id": carol.ID}); n != 0 {
		t.Error("the entity only the expired memory supported is still stored")
	}
	if got := search(nil).targets(); !strings.Contains(got, "Alice WORKS_AT Acme") {
		t.Errorf("after the sweep the lasting fact is gone: %q", got)
	}
	if status("GET", "/v1/memories/"+lasting) != http.StatusOK {
		t.Error("the lasting memory was swept")
	}
}

// waitStatus polls a memory until its ingestion is done.
func waitStatus(t *testing.T, c client, id string) {
	t.Helper()
	for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
		var got struct{ Status, LastError string }
		c.must(http.StatusOK, "GET", "/v1/memories/"+id, nil, &got)
		if got.Status == "done" {
			return
		}
		if got.Status == "failed" || time.Now().After(deadline) {
			t.Fatalf("memory %s: %s %s", id, got.Status, got.LastError)
		}
	}
}
