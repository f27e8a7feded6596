package handlers_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestSharedSpace: one owner's agents share a space: what one writes there the others
// read, list and find; no other requester, not even one the owner shared an agent's
// private space with, sees or writes it.
func TestSharedSpace(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "shr")
	second, foreign := w.agent+"-two", w.agent+"-other"
	w.owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": second}, nil)
	w.other.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": foreign}, nil)
	grantee := client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: "shr-grantee-" + w.agent}
	w.owner.must(http.StatusNoContent, "PUT", "/v1/agents/"+w.agent+"/shares/"+grantee.requester, nil, nil)
	shared := "user-" + w.owner.requester + "-shared"
	ingest(t, shared, "agent-"+w.agent+"-")

	var a added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "visibility": "shared",
		"messages": "Gina works at Vandelay."}, &a)
	if a.GroupID != shared {
		t.Fatalf("the shared write landed in %s, want %s", a.GroupID, shared)
	}
	var b added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": second, "visibility": "shared",
		"messages": "Gina lives in Queens."}, &b)
	waitStatus(t, w.owner, a.ID)
	waitStatus(t, w.owner, b.ID)

	// Acting for the second agent, the owner finds what the first wrote.
	var r searchResult
	w.owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": second, "query": "Gina Vandelay Queens"}, &r)
	if got := r.targets(); !strings.Contains(got, "Gina WORKS_AT Vandelay") || !strings.Contains(got, "Gina LIVES_IN Queens") {
		t.Errorf("the second agent's search of the shared space: %q", got)
	}
	var page struct{ Items []memory }
	w.owner.must(http.StatusOK, "GET", "/v1/memories?space=shared&agent_id="+second, nil, &page)
	if len(page.Items) != 2 {
		t.Errorf("the shared space lists %d memories for the second agent, want both", len(page.Items))
	}
	w.owner.must(http.StatusOK, "GET", "/v1/memories?agent_id="+w.agent, nil, &page)
	if len(page.Items) != 1 || page.Items[0].ID != a.ID {
		t.Errorf("the first agent's whole view: %+v, want its shared memory", page.Items)
	}

	// Everyone else: nothing, and no write.
	for _, c := range []struct {
		name string
		as   client
	}{{"another owner", w.other}, {"a grantee of the agent's private space", grantee}} {
		if s, _ := c.as.do("GET", "/v1/memories/"+a.ID, nil); s != http.StatusNotFound {
			t.Errorf("%s reads a shared memory: %d", c.name, s)
		}
		var r searchResult
		c.as.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": w.agent, "query": "Gina Vandelay Queens"}, &r)
		if len(r.Facts) != 0 || len(r.Episodes) != 0 {
			t.Errorf("%s finds the shared space through the agent: %q", c.name, r.targets())
		}
		c.as.must(http.StatusOK, "GET", "/v1/memories?space=shared", nil, &page)
		if len(page.Items) != 0 {
			t.Errorf("%s lists %d memories in its own shared space", c.name, len(page.Items))
		}
		if s, _ := c.as.do("DELETE", "/v1/memories/"+a.ID, nil); s != http.StatusNotFound {
			t.Errorf("%s deletes a shared memory: %d", c.name, s)
		}
	}
	if s, body := w.other.do("POST", "/v1/memories", map[string]any{"agent_id": w.agent, "visibility": "shared", "messages": "x"}); s != http.StatusForbidden {
		t.Errorf("another requester writes the owner's shared space for its agent: %d %s", s, body)
	}
	var c added
	w.other.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": foreign, "visibility": "shared", "messages": "Hal likes tea."}, &c)
	if c.GroupID != "user-"+w.other.requester+"-shared" {
		t.Errorf("another owner's shared write landed in %s", c.GroupID)
	}
	if s, _ := w.owner.do("GET", "/v1/memories/"+c.ID, nil); s != http.StatusNotFound {
		t.Errorf("the owner reads another owner's shared space: %d", s)
	}

	// The owner moves a private memory into the shared space; the other agent sees it.
	var p added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "Gina drives a Saab."}, &p)
	status, out := w.owner.patch(p.ID, "", map[string]any{"visibility": "shared"})
	var moved versioned
	mustDecode(t, status, http.StatusOK, out, &moved)
	if moved.GroupID != shared {
		t.Errorf("moved to %s, want %s", moved.GroupID, shared)
	}
	w.owner.must(http.StatusNoContent, "DELETE", "/v1/memories/"+b.ID, nil, nil)
}
