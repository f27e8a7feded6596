package handlers_test

import (
	"net/http"
	"testing"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

func TestAgents(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := &world{base: srv.URL, t: t, suffix: randomSuffix()}
	neo4jtest.Forget(t, w.suffix)
	alice, bob, carol := w.as("alice", "trusted"), w.as("bob", "trusted"), w.as("carol", "trusted")
	root := w.as("root", "admin")
	agent := w.id("helper")

	alice.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	if status, _ := bob.do("POST", "/v1/agents", map[string]any{"id": agent}); status != http.StatusConflict {
		t.Fatalf("second create: status %d, want 409", status)
	}
	if status, _ := bob.do("POST", "/v1/agents", map[string]any{"id": w.id("other"), "owner_id": alice.requester}); status != http.StatusForbidden {
		t.Fatalf("a non-admin naming an owner: status %d, want 403", status)
	}
	var a added
	alice.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "private note"}, &a)

	t.Run("OwnerShownOnlyToOwnerAndAdmin", func(t *testing.T) {
		var v struct {
			OwnerID string `json:"owner_id"`
		}
		alice.must(http.StatusOK, "GET", "/v1/agents/"+agent, nil, &v)
		if v.OwnerID != alice.requester {
			t.Fatalf("owner sees owner_id %q", v.OwnerID)
		}
		v.OwnerID = ""
		bob.must(http.StatusOK, "GET", "/v1/agents/"+agent, nil, &v)
		if v.OwnerID != "" {
			t.Fatalf("another requester sees owner_id %q", v.OwnerID)
		}
	})

	t.Run("ShareGrantAndRevoke", func(t *testing.T) {
		if status, _ := carol.do("GET", "/v1/memories/"+a.ID, nil); status != http.StatusNotFound {
			t.Fatalf("before the grant: %d, want 404", status)
		}
		if status, _ := bob.do("PUT", "/v1/agents/"+agent+"/shares/"+carol.requester, nil); status != http.StatusForbidden {
			t.Fatalf("a non-owner sharing: %d, want 403", status)
		}
		alice.must(http.StatusNoContent, "PUT", "/v1/agents/"+agent+"/shares/"+carol.requester, nil, nil)
		carol.must(http.StatusOK, "GET", "/v1/memories/"+a.ID, nil, nil)
		if status, _ := carol.do("DELETE", "/v1/memories/"+a.ID, nil); status != http.StatusForbidden {
			t.Fatalf("a grantee deleting: %d, want 403", status)
		}
		alice.must(http.StatusNoContent, "DELETE", "/v1/agents/"+agent+"/shares/"+carol.requester, nil, nil)
		if status, _ := carol.do("GET", "/v1/memories/"+a.ID, nil); status != http.StatusNotFound {
			t.Fatalf("after the revoke: %d, want 404", status)
		}
	})

	t.Run("TransferOwner", func(t *testing.T) {
		if status, _ := bob.do("PUT", "/v1/agents/"+agent+"/owner", map[string]any{"owner_id": bob.requester}); status != http.StatusForbidden {
			t.Fatalf("taking someone's agent: %d, want 403", status)
		}
		alice.must(http.StatusNoContent, "PUT", "/v1/agents/"+agent+"/owner", map[string]any{"owner_id": bob.requester}, nil)
		bob.must(http.StatusOK, "GET", "/v1/memories/"+a.ID, nil, nil)
		if status, _ := alice.do("GET", "/v1/memories/"+a.ID, nil); status != http.StatusNotFound {
			t.Fatalf("the old owner reading the private space: %d, want 404", status)
		}
		root.must(http.StatusNoContent, "PUT", "/v1/agents/"+agent+"/owner", map[string]any{"owner_id": alice.requester}, nil)
	})

	t.Run("DeleteErasesEverySpace", func(t *testing.T) {
		var pub added
		alice.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "public note", "visibility": "public"}, &pub)
		if status, _ := bob.do("DELETE", "/v1/agents/"+agent, nil); status != http.StatusForbidden {
			t.Fatalf("a non-owner erasing: %d, want 403", status)
		}
		var res struct {
			Erased int `json:"erased_memories"`
		}
		alice.must(http.StatusOK, "DELETE", "/v1/agents/"+agent, nil, &res)
		if res.Erased != 2 {
			t.Fatalf("erased %d memories, want 2", res.Erased)
		}
		for _, id := range []string{a.ID, pub.ID} {
			if status, _ := alice.do("GET", "/v1/memories/"+id, nil); status != http.StatusNotFound {
				t.Fatalf("%s after erasure: %d, want 404", id, status)
			}
		}
		var audit struct {
			Events []struct{ Kind, Subject string }
		}
		root.must(http.StatusOK, "GET", "/v1/audit?kind=deleted&subject="+agent, nil, &audit)
		if len(audit.Events) != 1 {
			t.Fatalf("%d deleted events for the agent, want 1", len(audit.Events))
		}
	})
}

func TestAdminRoutes(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := &world{base: srv.URL, t: t, suffix: randomSuffix()}
	neo4jtest.Forget(t, w.suffix)
	user, root, confined := w.as("user", "trusted"), w.as("root", "admin"), w.as("user", "confined")
	team := w.id("team")
	for _, c := range []client{user, confined} {
		for _, req := range []struct {
			method, path string
			body         any
		}{
			{"POST", "/v1/teams", map[string]any{"name": team}},
			{"PUT", "/v1/teams/" + team + "/members/" + c.requester, map[string]any{"role": "writer"}},
			{"DELETE", "/v1/teams/" + team + "/members/" + c.requester, nil},
			{"PUT", "/v1/promoters/" + c.requester, nil},
			{"DELETE", "/v1/promoters/" + c.requester, nil},
			{"GET", "/v1/audit", nil},
		} {
			status, body := c.do(req.method, req.path, req.body)
			if status != http.StatusForbidden {
				t.Errorf("%s %s via %s host: %d, want 403: %s", req.method, req.path, c.key, status, body)
			}
		}
	}
	root.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
	if status, _ := root.do("POST", "/v1/teams", map[string]any{"name": team}); status != http.StatusConflict {
		t.Fatalf("a second team of one name: %d, want 409", status)
	}
	if status, _ := root.sendMalformed("PUT", "/v1/teams/"+team+"/members/"+user.requester, map[string]any{"role": "owner"}); status != http.StatusBadRequest {
		t.Fatalf("an unknown role: %d, want 400", status)
	}
	if status, _ := root.do("PUT", "/v1/teams/no-such-"+team+"/members/"+user.requester, map[string]any{"role": "reader"}); status != http.StatusNotFound {
		t.Fatalf("a member of no team: %d, want 404", status)
	}
	if status, _ := user.do("GET", "/v1/teams/"+team, nil); status != http.StatusNotFound {
		t.Fatalf("a non-member reading the team: %d, want 404", status)
	}
	root.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+user.requester, map[string]any{"role": "reader"}, nil)
	var got struct{ Members map[string]string }
	user.must(http.StatusOK, "GET", "/v1/teams/"+team, nil, &got)
	if got.Members[user.requester] != "reader" {
		t.Fatalf("members = %v", got.Members)
	}
	var audit struct {
		Events     []struct{ Kind string }
		NextCursor string `json:"next_cursor"`
	}
	root.must(http.StatusOK, "GET", "/v1/audit?subject="+team+"&kind=membership_changed", nil, &audit)
	if len(audit.Events) != 2 {
		t.Fatalf("%d membership_changed events for the team, want 2 (created, member added)", len(audit.Events))
	}
	root.must(http.StatusOK, "GET", "/v1/audit?limit=1&actor="+user.requester, nil, &audit)
	if len(audit.Events) != 1 || audit.NextCursor == "" {
		t.Fatalf("a page of 1 of the user's 12 denials: %d events, cursor %q", len(audit.Events), audit.NextCursor)
	}
	if status, _ := root.sendMalformed("GET", "/v1/audit?since=yesterday", nil); status != http.StatusBadRequest {
		t.Fatalf("a malformed since: %d, want 400", status)
	}
}

// TestProvenance: a team copy of a private memory shows promoted_from (the private
// original's id) only to who can see the original (security finding 10); a copy of a
// public memory shows it to everyone who sees the copy.
func TestProvenance(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := &world{base: srv.URL, t: t, suffix: randomSuffix()}
	neo4jtest.Forget(t, w.suffix)
	alice, bob, root := w.as("alice", "trusted"), w.as("bob", "trusted"), w.as("root", "admin")
	agent, team := w.id("a"), w.id("team")
	alice.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	root.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
	root.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+alice.requester, map[string]any{"role": "writer"}, nil)
	root.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+bob.requester, map[string]any{"role": "reader"}, nil)
	copyOf := func(visibility string) (original, copied string) {
		var a added
		alice.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "visibility": visibility,
			"messages": visibility + " provenance note " + w.suffix}, &a)
		var m memory
		alice.must(http.StatusAccepted, "POST", "/v1/memories/"+a.ID+"/promote", map[string]any{"target": "team:" + team}, &m)
		return a.ID, m.ID
	}
	private, privateCopy := copyOf("private")
	public, publicCopy := copyOf("public")
	// What each reader sees of the copies' promoted_from: by id, in the team's list,
	// in search and over MCP.
	seen := func(c client) map[string][]string {
		out := map[string][]string{}
		for _, id := range []string{privateCopy, publicCopy} {
			var m memory
			c.must(http.StatusOK, "GET", "/v1/memories/"+id, nil, &m)
			out[id] = append(out[id], m.PromotedFrom)
		}
		var page struct{ Items []memory }
		c.must(http.StatusOK, "GET", "/v1/memories?space=team:"+team, nil, &page)
		var found struct{ Episodes []memory }
		c.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": agent, "query": "provenance " + w.suffix,
			"scopes": []string{"team:" + team}, "include": []string{"episodes"}}, &found)
		for _, m := range append(page.Items, found.Episodes...) {
			if m.ID == privateCopy || m.ID == publicCopy {
				out[m.ID] = append(out[m.ID], m.PromotedFrom)
			}
		}
		session := mcpSession(t, srv.URL, matrixKeys["trusted"], c.requester)
		for _, id := range []string{privateCopy, publicCopy} {
			var m memory
			callTool(t, session, "get_memory", map[string]any{"id": id}, &m)
			out[id] = append(out[id], m.PromotedFrom)
		}
		return out
	}
	check := func(who string, c client, wantPrivate string) {
		t.Helper()
		got := seen(c)
		for id, want := range map[string]string{privateCopy: wantPrivate, publicCopy: public} {
			if len(got[id]) != 4 {
				t.Fatalf("%s: the copy %s was read %d ways, want 4 (get, list, search, MCP)", who, id, len(got[id]))
			}
			for _, from := range got[id] {
				if from != want {
					t.Errorf("%s reads promoted_from %q on %s, want %q", who, from, id, want)
				}
			}
		}
	}
	check("alice, the original's owner", alice, private)
	check("bob, a team reader who cannot see the original", bob, "")
	alice.must(http.StatusNoContent, "PUT", "/v1/agents/"+agent+"/shares/"+bob.requester, nil, nil)
	check("bob, with the original shared", bob, private)
}
