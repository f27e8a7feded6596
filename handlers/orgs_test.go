package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/memgate/memgate/access"
	mgclient "github.com/memgate/memgate/client"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// orgKeys: a trusted key and an admin key for each of two organizations, and the
// operator's platform key.
var orgKeys = map[string]string{
	"acme": "k-acme-backend", "acme-admin": "k-acme-admin",
	"globex": "k-globex-backend", "globex-admin": "k-globex-admin",
	"platform": "k-platform",
}

func orgKeyring() []access.KeySpec {
	return []access.KeySpec{
		{Name: "acme-backend", SHA256: access.HashKey(orgKeys["acme"]), Trusted: true, Org: "acme"},
		{Name: "acme-admin", SHA256: access.HashKey(orgKeys["acme-admin"]), Trusted: true, Admin: true, Org: "acme"},
		{Name: "globex-backend", SHA256: access.HashKey(orgKeys["globex"]), Trusted: true, Org: "globex"},
		{Name: "globex-admin", SHA256: access.HashKey(orgKeys["globex-admin"]), Trusted: true, Admin: true, Org: "globex"},
		{Name: "platform", SHA256: access.HashKey(orgKeys["platform"]), Trusted: true, Admin: true, Platform: true},
	}
}

// TestOrgs_SideBySide: two organizations use the same agent id and the same requester
// ids; each writes, searches, promotes, exports and audits its own, and sees nothing of
// the other's, which answers as if it did not exist. The graph carries each
// organization in its group_ids.
func TestOrgs_SideBySide(t *testing.T) {
	t.Parallel()
	srv := newServer(t, orgKeyring())
	mark := randomSuffix()
	neo4jtest.Forget(t, mark)
	agent, alice, bob := "assistant-"+mark, "alice-"+mark, "bob-"+mark
	type side struct {
		org, word  string
		alice, bob client
		admin      client
		memory     string
	}
	sides := []*side{{org: "acme", word: "Vandelay"}, {org: "globex", word: "Kramerica"}}
	for _, s := range sides {
		s.alice = client{t: t, base: srv.URL, key: orgKeys[s.org], requester: alice}
		s.bob = client{t: t, base: srv.URL, key: orgKeys[s.org], requester: bob}
		s.admin = client{t: t, base: srv.URL, key: orgKeys[s.org+"-admin"], requester: "ops-" + mark}
		s.alice.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
		ingest(t, "org-"+s.org+"_agent-"+agent+"-", "org-"+s.org+"_global")
	}
	for _, s := range sides {
		var a added
		s.alice.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "visibility": "public",
			"messages": "Gina works at " + s.word + "."}, &a)
		if want := "org-" + s.org + "_agent-" + agent + "-public"; a.GroupID != want {
			t.Fatalf("%s's public write landed in %s, want %s", s.org, a.GroupID, want)
		}
		s.memory = a.ID
	}
	for _, s := range sides {
		waitStatus(t, s.alice, s.memory)
	}

	for i, s := range sides {
		other := sides[1-i]
		// Public is public within the organization: bob reads alice's agent's public
		// memory in his own organization, and nothing of the other's.
		for _, as := range []client{s.alice, s.bob} {
			var r searchResult
			as.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": agent, "query": "Gina works"}, &r)
			if got := r.targets(); !strings.Contains(got, "Gina WORKS_AT "+s.word) || strings.Contains(got, other.word) {
				t.Errorf("%s's %s searches the agent: %q; want its own organization's fact only", s.org, as.requester, got)
			}
			for _, ep := range r.Episodes {
				if !strings.HasPrefix(ep.GroupID, "org-"+s.org+"_") {
					t.Errorf("%s's search shows a memory of %s", s.org, ep.GroupID)
				}
			}
		}
		// The other organization's memory does not exist for it: read, change, delete,
		// promote, retry, versions.
		for _, r := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/v1/memories/" + other.memory, nil},
			{"GET", "/v1/memories/" + other.memory + "/versions", nil},
			{"PATCH", "/v1/memories/" + other.memory, map[string]any{"tags": []string{"x"}}},
			{"POST", "/v1/memories/" + other.memory + "/promote", map[string]any{"target": "global"}},
			{"POST", "/v1/memories/" + other.memory + "/retry", nil},
			{"DELETE", "/v1/memories/" + other.memory, nil},
		} {
			if status, body := s.alice.do(r.method, r.path, r.body); status != http.StatusNotFound {
				t.Errorf("%s's alice: %s %s of %s's memory: %d %s; want 404", s.org, r.method, r.path, other.org, status, body)
			}
		}
	}

	// Promotion to the global space is each organization's own.
	for _, s := range sides {
		s.admin.must(http.StatusNoContent, "PUT", "/v1/promoters/"+alice, nil, nil)
		var copied added
		s.alice.must(http.StatusAccepted, "POST", "/v1/memories/"+s.memory+"/promote", map[string]any{"target": "global"}, &copied)
		if want := "org-" + s.org + "_global"; copied.GroupID != want {
			t.Errorf("%s's promotion landed in %s, want %s", s.org, copied.GroupID, want)
		}
		waitStatus(t, s.alice, copied.ID)
	}
	for _, s := range sides {
		var page struct{ Items []memory }
		s.bob.must(http.StatusOK, "GET", "/v1/memories?space=global&agent_id="+agent, nil, &page)
		if len(page.Items) != 1 || page.Items[0].GroupID != "org-"+s.org+"_global" || page.Items[0].PromotedFrom != s.memory {
			t.Errorf("%s's global space lists %+v; want its own promoted copy only", s.org, page.Items)
		}
	}

	// Export gives each organization's agent, and only it.
	for i, s := range sides {
		var out bytes.Buffer
		c := mgclient.New(srv.URL, orgKeys[s.org], alice)
		if _, _, err := mgclient.Export(context.Background(), c, agent, &out); err != nil {
			t.Fatalf("%s's export: %v", s.org, err)
		}
		if !strings.Contains(out.String(), s.word) || strings.Contains(out.String(), sides[1-i].word) {
			t.Errorf("%s's export: %s", s.org, out.String())
		}
	}

	// A refusal is audited in the organization where it happened, and each admin
	// lists its own organization's events only.
	acme, globex := sides[0], sides[1]
	if status, _ := globex.bob.do("POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "x"}); status != http.StatusForbidden {
		t.Fatalf("globex's bob writes alice's agent: %d, want 403", status)
	}
	var events struct {
		Items []struct{ Actor, Kind, Space string } `json:"events"`
	}
	globex.admin.must(http.StatusOK, "GET", "/v1/audit?kind=namespace_denied&actor="+bob, nil, &events)
	if len(events.Items) != 1 {
		t.Errorf("globex's admin lists %d refusals of bob, want 1", len(events.Items))
	}
	acme.admin.must(http.StatusOK, "GET", "/v1/audit?actor="+bob, nil, &events)
	if len(events.Items) != 0 {
		t.Errorf("acme's admin lists globex's events: %+v", events.Items)
	}
	acme.admin.must(http.StatusOK, "GET", "/v1/audit?actor="+alice+"&kind=promoted", nil, &events)
	if len(events.Items) != 1 || events.Items[0].Space != "org-acme_global" {
		t.Errorf("acme's admin lists alice's promotions: %+v, want acme's one", events.Items)
	}

	// The platform key acts in the organization a request names; another key may
	// name only its own, and naming another is refused and audited.
	resp, body := do(t, "GET", srv.URL+"/v1/audit?actor="+bob+"&kind=namespace_denied", map[string]string{
		"Authorization": "Bearer " + orgKeys["platform"], "X-Requester-Id": "oncall-" + mark, "X-Requester-Org": "globex"}, "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), bob) {
		t.Errorf("the platform key in globex lists bob's refusal: %d %s", resp.StatusCode, body)
	}
	resp, _ = do(t, "GET", srv.URL+"/v1/memories/"+globex.memory, map[string]string{
		"Authorization": "Bearer " + orgKeys["acme"], "X-Requester-Id": alice, "X-Requester-Org": "globex"}, "")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("acme's key naming globex: %d, want 403", resp.StatusCode)
	}
	resp, _ = do(t, "GET", srv.URL+"/v1/memories/"+acme.memory, map[string]string{
		"Authorization": "Bearer " + orgKeys["acme"], "X-Requester-Id": alice, "X-Requester-Org": "acme"}, "")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("acme's key naming acme: %d, want 200", resp.StatusCode)
	}
	acme.admin.must(http.StatusOK, "GET", "/v1/audit?kind=requester_denied&actor="+alice, nil, &events)
	if len(events.Items) != 1 {
		t.Errorf("acme's audit holds %d refusals of its key naming globex, want 1", len(events.Items))
	}

	// In Neo4j: every node and edge of these writes carries its organization's prefix.
	for _, s := range sides {
		nodes, edges := neo4jtest.Census(t, "org-"+s.org+"_agent-"+agent+"-")
		if nodes == 0 || edges == 0 {
			t.Errorf("%s's spaces hold %d nodes and %d edges in Neo4j", s.org, nodes, edges)
		}
	}
	if n, _ := neo4jtest.Census(t, "agent-"+agent+"-"); n != 0 {
		t.Errorf("%d nodes of the agent are in the implicit organization", n)
	}

	// The platform key's Idempotency-Key is each organization's: acme's alice and the
	// implicit organization's requester whose id spells acme's prefix before alice's
	// store a memory each under the same key.
	lookalike := "org-acme_" + alice
	platform := func(org, requester string) map[string]string {
		h := map[string]string{"Authorization": "Bearer " + orgKeys["platform"], "X-Requester-Id": requester,
			"Content-Type": "application/json", "Idempotency-Key": "same-" + mark}
		if org != "" {
			h["X-Requester-Org"] = org
		}
		return h
	}
	if resp, body := do(t, "POST", srv.URL+"/v1/agents", platform("", lookalike), `{"id":"`+agent+`"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("the look-alike's agent: %d %s", resp.StatusCode, body)
	}
	ids := map[string]bool{}
	for _, who := range [][2]string{{"acme", alice}, {"", lookalike}} {
		resp, body := do(t, "POST", srv.URL+"/v1/memories", platform(who[0], who[1]), `{"agent_id":"`+agent+`","messages":"Same key, `+who[1]+`."}`)
		var a added
		_ = json.Unmarshal(body, &a)
		if resp.StatusCode != http.StatusAccepted || a.ID == "" {
			t.Fatalf("%s in %q with the shared key: %d %s", who[1], who[0], resp.StatusCode, body)
		}
		ids[a.ID] = true
	}
	if len(ids) != 2 {
		t.Errorf("two organizations' writes under one Idempotency-Key stored %d memories, want 2", len(ids))
	}
}
