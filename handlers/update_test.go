package handlers_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

type versioned struct {
	ID        string     `json:"id"`
	GroupID   string     `json:"group_id"`
	Status    string     `json:"status"`
	Content   string     `json:"content"`
	Tags      []string   `json:"tags"`
	Priority  string     `json:"priority"`
	ExpiresAt *time.Time `json:"expires_at"`
	Version   int        `json:"version"`
	UpdatedAt *time.Time `json:"updated_at"`
	WrittenBy string     `json:"written_by"`
	UpdatedBy string     `json:"updated_by"`
}

// patch sends a PATCH with an If-Match header (none when ifMatch is empty).
func (c client) patch(id, ifMatch string, body any) (int, []byte) {
	c.t.Helper()
	return c.sendPatch(false, id, ifMatch, body)
}

// sendPatch is patch for a body outside openapi.json on purpose when malformed.
func (c client) sendPatch(malformed bool, id, ifMatch string, body any) (int, []byte) {
	c.t.Helper()
	hdr := c.header()
	if ifMatch != "" {
		hdr["If-Match"] = ifMatch
	}
	resp, out := send(c.t, malformed, "PATCH", c.base+"/v1/memories/"+id, hdr, mustJSON(c.t, body))
	return resp.StatusCode, out
}

// TestUpdate: a writer changes a memory in place; every update keeps the version it
// replaces, a stale If-Match loses with 412, and a content change re-runs extraction,
// expiring (not deleting) the facts only the old content stated.
func TestUpdate(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "upd")
	ingest(t, "agent-"+w.agent+"-")
	var a added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent,
		"messages": "Alice works at Acme. Bob lives in Paris.", "tags": []string{"work"}}, &a)
	waitStatus(t, w.owner, a.ID)
	facts := func() searchResult {
		var r searchResult
		w.owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": w.agent,
			"query": "Alice Acme Globex Bob Paris", "include_expired": true}, &r)
		return r
	}
	var acme factHit
	for _, f := range facts().Facts {
		if f.Target.Name == "Acme" {
			acme = f
		}
	}
	if acme.ID == "" {
		t.Fatalf("the first version's fact is missing: %q", facts().targets())
	}

	// Attributes only: version 2, the content and its facts untouched, no re-extraction.
	status, body := w.owner.patch(a.ID, `"1"`, map[string]any{"tags": []string{"work", "hr"}, "priority": "high"})
	var v2 versioned
	mustDecode(t, status, http.StatusOK, body, &v2)
	if v2.Version != 2 || v2.Status != "done" || v2.Priority != "high" || strings.Join(v2.Tags, ",") != "work,hr" || v2.UpdatedAt == nil {
		t.Fatalf("after the attribute update: %+v", v2)
	}

	// Two concurrent content updates from version 2: one wins, one gets 412.
	statuses := make([]int, 2)
	var wg sync.WaitGroup
	for i, text := range []string{"Alice works at Globex. Bob lives in Paris.", "Alice works at Initech. Bob lives in Paris."} {
		wg.Go(func() { statuses[i], _ = w.owner.patch(a.ID, `"2"`, map[string]any{"messages": text}) })
	}
	wg.Wait()
	if !(statuses[0] == 200 && statuses[1] == 412) && !(statuses[0] == 412 && statuses[1] == 200) {
		t.Fatalf("two PATCHes with If-Match 2: %v, want one 200 and one 412", statuses)
	}
	winner := map[bool]string{true: "Globex", false: "Initech"}[statuses[0] == 200]
	waitStatus(t, w.owner, a.ID)

	var history struct {
		Current  versioned `json:"current"`
		Versions []struct {
			versioned
			ReplacedAt time.Time `json:"replaced_at"`
			ReplacedBy string    `json:"replaced_by"`
		} `json:"versions"`
	}
	w.owner.must(http.StatusOK, "GET", "/v1/memories/"+a.ID+"/versions", nil, &history)
	if history.Current.Version != 3 || !strings.Contains(history.Current.Content, winner) || len(history.Versions) != 2 {
		t.Fatalf("versions: %+v", history)
	}
	if v := history.Versions[0]; v.Version != 2 || !strings.Contains(v.Content, "Acme") || v.Priority != "high" || v.ReplacedBy != w.owner.requester {
		t.Errorf("version 2 as kept: %+v", v)
	}
	if v := history.Versions[1]; v.Version != 1 || !strings.Contains(v.Content, "Acme") || v.Priority != "" || len(v.Tags) != 1 {
		t.Errorf("version 1 as kept: %+v", v)
	}

	// The fact only the old content stated is expired, not deleted; the one both
	// versions state is still current and cites the memory; the new fact is current.
	after := facts()
	found := map[string]factHit{}
	for _, f := range after.Facts {
		found[f.Target.Name] = f
	}
	if f := found["Acme"]; f.ID != acme.ID || f.ExpiredAt == nil {
		t.Errorf("the old content's fact: %+v, want %s kept with expired_at", f, acme.ID)
	}
	if f := found["Paris"]; f.ExpiredAt != nil || len(f.Episodes) != 1 || f.Episodes[0] != a.ID {
		t.Errorf("the fact both versions state: %+v", f)
	}
	if f := found[winner]; f.ID == "" || f.ExpiredAt != nil {
		t.Errorf("the new content's fact: %+v in %q", f, after.targets())
	}
	var current searchResult
	w.owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": w.agent, "query": "Alice Acme"}, &current)
	if strings.Contains(current.targets(), "Acme") {
		t.Errorf("the default search still returns the retracted fact: %q", current.targets())
	}

	// Clearing and the ETag: expires_at set then cleared with null.
	in := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	status, body = w.owner.patch(a.ID, "", map[string]any{"expires_at": in})
	var v4 versioned
	mustDecode(t, status, http.StatusOK, body, &v4)
	if v4.ExpiresAt == nil || !v4.ExpiresAt.Equal(in) || v4.Version != 4 {
		t.Errorf("expires_at set: %+v", v4)
	}
	status, body = w.owner.patch(a.ID, `"4"`, map[string]any{"expires_at": nil})
	var v5 versioned
	mustDecode(t, status, http.StatusOK, body, &v5)
	if v5.ExpiresAt != nil || v5.Version != 5 {
		t.Errorf("expires_at cleared: %+v", v5)
	}
	resp, _ := do(t, "GET", srv.URL+"/v1/memories/"+a.ID, map[string]string{"Authorization": "Bearer " + w.owner.key, "X-Requester-Id": w.owner.requester}, "")
	if resp.Header.Get("ETag") != `"5"` {
		t.Errorf("ETag %q, want \"5\"", resp.Header.Get("ETag"))
	}
}

// TestUpdate_Denied: who may not change a memory, and what a patch may not do.
func TestUpdate_Denied(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "updd")
	reader := w.other
	w.admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+w.team+"/members/"+reader.requester, map[string]any{"role": "reader"}, nil)
	add := func(body map[string]any) string {
		body["agent_id"] = w.agent
		var a added
		w.owner.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
		return a.ID
	}
	private := add(map[string]any{"messages": "a private note"})
	public := add(map[string]any{"messages": "a public note", "visibility": "public"})
	team := add(map[string]any{"messages": "a team note", "visibility": "team", "team": w.team})
	change := map[string]any{"messages": "changed"}

	for _, c := range []struct {
		name    string
		as      client
		id      string
		ifMatch string
		body    any
		status  int
		code    string
	}{
		{"another requester, a private memory", w.other, private, "", change, 404, "not_found"},
		{"another requester, a public memory", w.other, public, "", change, 403, "forbidden"},
		{"a team reader", reader, team, "", change, 403, "forbidden"},
		{"an unknown id", w.owner, "00000000-0000-4000-8000-000000000000", "", change, 404, "not_found"},
		{"not an id", w.owner, "nope", "", change, 404, "not_found"},
		{"a stale If-Match", w.owner, private, `"7"`, change, 412, "precondition_failed"},
		{"nothing to change", w.owner, private, "", map[string]any{}, 400, "invalid"},
		{"a field that cannot change", w.owner, private, "", map[string]any{"agent_id": "x"}, 400, "invalid"},
		{"null messages", w.owner, private, "", map[string]any{"messages": nil}, 400, "invalid"},
		{"null visibility", w.owner, private, "", map[string]any{"visibility": nil}, 400, "invalid"},
		{"a bad priority", w.owner, private, "", map[string]any{"priority": "urgent"}, 400, "invalid"},
		{"expires_at in the past", w.owner, private, "", map[string]any{"expires_at": "2020-01-01T00:00:00Z"}, 400, "invalid"},
		{"a credential", w.owner, private, "", map[string]any{"messages": "the key is AKIAIOSFODNN7EXAMPLE"}, 422, "unprocessable"},
		{"a credential in metadata", w.owner, private, "", map[string]any{"metadata": map[string]any{"k": "ghp_" + strings.Repeat("a", 36)}}, 422, "unprocessable"},
		{"to global", w.owner, private, "", map[string]any{"visibility": "global"}, 403, "forbidden"},
		{"to a team it does not write", w.owner, private, "", map[string]any{"visibility": "team", "team": "nosuch-" + w.team}, 403, "forbidden"},
	} {
		// The bodies openapi.json itself refuses are sent as they are.
		malformed := c.status == 400 || c.name == "to global"
		status, body := c.as.sendPatch(malformed, c.id, c.ifMatch, c.body)
		if status != c.status || !strings.Contains(string(body), `"`+c.code+`"`) {
			t.Errorf("%s: %d %s, want %d %s", c.name, status, body, c.status, c.code)
		}
	}
	var kept versioned
	w.owner.must(http.StatusOK, "GET", "/v1/memories/"+private, nil, &kept)
	if kept.Version != 1 || kept.Content != "a private note" {
		t.Errorf("a refused patch changed the memory: %+v", kept)
	}
	var events struct {
		Events []struct{ Kind, Actor string }
	}
	w.admin.must(http.StatusOK, "GET", "/v1/audit?kind=namespace_denied&subject="+team, nil, &events)
	if len(events.Events) != 1 || events.Events[0].Actor != reader.requester {
		t.Errorf("the team reader's refused update was not audited: %+v", events.Events)
	}
	if n := neo4jtest.Count(t, "MATCH (v:MemoryVersion {episode_uuid: $id}) RETURN count(v)", map[string]any{"id": private}); n != 0 {
		t.Errorf("refused patches left %d versions", n)
	}
}

// mustDecode checks a response's status and decodes its body.
func mustDecode(t *testing.T, status, want int, body []byte, into any) {
	t.Helper()
	if status != want {
		t.Fatalf("status %d, want %d: %s", status, want, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
}

// TestUpdate_Move: the creator moves a memory between its spaces; the graph follows
// (facts derived again in the new space, nothing left in the old), the move is
// audited, and only the creator may make it. A visibility rule narrows an update as
// it narrows an add.
func TestUpdate_Move(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) {
		s.Limits.VisibilityRules = []service.VisibilityRule{{Name: "confidential", Pattern: regexp.MustCompile(`(?i)\bconfidential\b`)}}
	})
	w := newTeamWorld(t, srv.URL, "mov")
	ingest(t, "agent-"+w.agent+"-", "team-"+w.team)
	w.admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+w.team+"/members/"+w.other.requester, map[string]any{"role": "writer"}, nil)
	private, public, team := "agent-"+w.agent+"-private", "agent-"+w.agent+"-public", "team-"+w.team
	var a added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "Dana works at Umbrella."}, &a)
	waitStatus(t, w.owner, a.ID)
	derived := func(group string) int64 {
		return neo4jtest.Count(t, `MATCH (n:Entity) WHERE n.group_id = $g AND (EXISTS { (:Episodic {uuid: $id})-[:MENTIONS]->(n) }
			OR EXISTS { (n)-[r:RELATES_TO]-() WHERE $id IN r.episodes }) RETURN count(n)`, map[string]any{"g": group, "id": a.ID})
	}
	if derived(private) == 0 {
		t.Fatal("nothing was derived from the memory in its private space")
	}
	if s, _ := w.other.do("GET", "/v1/memories/"+a.ID, nil); s != http.StatusNotFound {
		t.Fatalf("another requester reads the private memory: %d", s)
	}

	move := func(as client, body map[string]any, want int) versioned {
		t.Helper()
		status, out := as.patch(a.ID, "", body)
		var v versioned
		if status != want {
			t.Fatalf("%s moves with %v: %d %s, want %d", as.requester, body, status, out, want)
		}
		if want == http.StatusOK {
			mustDecode(t, status, want, out, &v)
		}
		return v
	}
	if v := move(w.owner, map[string]any{"visibility": "public"}, http.StatusOK); v.GroupID != public || v.Status != "queued" {
		t.Fatalf("after the move to public: %+v", v)
	}
	waitStatus(t, w.owner, a.ID)
	var r searchResult
	w.other.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": w.agent, "query": "Dana Umbrella"}, &r)
	if !strings.Contains(r.targets(), "Dana WORKS_AT Umbrella") {
		t.Errorf("another requester does not find the public memory's fact: %q", r.targets())
	}
	if n := derived(private); n != 0 {
		t.Errorf("%d entities derived from the memory are left in the private space", n)
	}
	if derived(public) == 0 {
		t.Error("nothing was derived in the public space")
	}

	// Into a team the owner writes; then a team writer who is not its creator may not
	// move it.
	move(w.owner, map[string]any{"visibility": "team", "team": w.team}, http.StatusOK)
	waitStatus(t, w.owner, a.ID)
	if derived(public) != 0 || derived(team) == 0 {
		t.Errorf("after the move to the team: %d entities left in public, %d in the team", derived(public), derived(team))
	}
	move(w.other, map[string]any{"visibility": "private"}, http.StatusForbidden)

	// New content a rule matches takes the memory out of the team.
	v := move(w.owner, map[string]any{"messages": "Confidential: Dana works at Umbrella."}, http.StatusOK)
	if v.GroupID != private {
		t.Errorf("the rule did not narrow the update: %+v", v)
	}
	waitStatus(t, w.owner, a.ID)
	if s, _ := w.other.do("GET", "/v1/memories/"+a.ID, nil); s != http.StatusNotFound {
		t.Errorf("the team writer still reads the memory the rule made private: %d", s)
	}
	if n := neo4jtest.Count(t, "MATCH (v:MemoryVersion {episode_uuid: $id}) WHERE v.group_id <> $g RETURN count(v)", map[string]any{"id": a.ID, "g": private}); n != 0 {
		t.Errorf("%d versions are left outside the memory's space", n)
	}

	var events struct {
		Events []struct{ Kind, Actor, Space, Reason string }
	}
	w.admin.must(http.StatusOK, "GET", "/v1/audit?subject="+a.ID, nil, &events)
	var kinds []string
	for _, e := range events.Events {
		kinds = append(kinds, e.Kind+"@"+e.Space)
	}
	want := []string{"visibility_changed@" + private, "namespace_denied@" + private,
		"visibility_changed@" + team, "visibility_changed@" + public}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("audit of the memory, newest first:\n got %v\nwant %v", kinds, want)
	}
}
