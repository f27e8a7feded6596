package handlers_test

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/access/idp"
	"github.com/memgate/memgate/access/idp/idptest"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

type requesterErasure struct {
	Requester     string `json:"requester"`
	DryRun        bool   `json:"dry_run"`
	Pseudonym     string `json:"pseudonym"`
	Agents        int    `json:"agents"`
	Memories      int    `json:"memories"`
	Versions      int    `json:"versions"`
	Entities      int    `json:"entities"`
	Facts         int    `json:"facts"`
	Conflicts     int    `json:"conflicts"`
	Shares        int    `json:"shares"`
	Delegations   int    `json:"delegations"`
	Memberships   int    `json:"memberships"`
	Promoter      bool   `json:"promoter"`
	Teams         int    `json:"teams"`
	Pseudonymized int    `json:"pseudonymized_memories"`
	AuditEvents   int    `json:"audit_events"`
}

// eventOf is an audit event as GET /v1/audit lists it.
type eventOf struct {
	ID, Kind, Actor, Subject, Space, Reason string
	HostKey                                 string `json:"host_key"`
	At                                      time.Time
}

// auditOf lists the events of the admin's organization that name who as actor or
// subject, by id.
func auditOf(c client, who string) map[string]eventOf {
	c.t.Helper()
	out := map[string]eventOf{}
	for _, field := range []string{"actor", "subject"} {
		var page struct{ Events []eventOf }
		c.must(http.StatusOK, "GET", "/v1/audit?"+url.Values{field: {who}, "limit": {"100"}}.Encode(), nil, &page)
		for _, e := range page.Events {
			out[e.ID] = e
		}
	}
	return out
}

// traces counts the nodes and relationships of org that still name requester id: a
// property equal to it, a string holding its shared space's group_id or its JWT
// host's name, a list holding it.
func traces(t *testing.T, org graph.Org, id string) int64 {
	t.Helper()
	p := map[string]any{"prefix": org.Prefix(), "org": string(org), "id": id, "shared": org.Shared(id).GroupID(),
		"jwt": "jwt:" + org.Prefix() + id}
	const names = `[k IN keys(x) | x[k]] AS values
		WHERE any(v IN values WHERE v = $id
		       OR (valueType(v) STARTS WITH 'STRING' AND (v CONTAINS $shared OR v CONTAINS $jwt))
		       OR (valueType(v) STARTS WITH 'LIST' AND $id IN v))
		RETURN count(x)`
	ofOrg := `CASE $prefix WHEN '' THEN NOT x.group_id STARTS WITH 'org-' ELSE x.group_id STARTS WITH $prefix END`
	return neo4jtest.Count(t, `MATCH (x) WHERE (x.group_id IS NOT NULL AND `+ofOrg+`)
		OR ((x:Agent OR x:Team OR x:Principal) AND x.org = $org) WITH x, `+names, p) +
		neo4jtest.Count(t, `MATCH ()-[x]->() WHERE x.group_id IS NOT NULL AND `+ofOrg+` WITH x, `+names, p)
}

// TestEraseRequester: a person with two agents, memories in its agents' private and
// public spaces, its shared space, a team and (promoted) the global space, an update of
// someone else's team memory, a resolved conflict, a share granted and one held, two
// memberships, the promoter role and a team it owns. Those who may not erase it are
// refused (403, audited); the dry run's counts are the erasure's; afterwards nothing
// of its spaces is left, no node of its organization names it, its team stays with a
// pseudonymous owner, the audit events keep their kind and time under the pseudonym,
// everyone else's memories are untouched, and the person created again starts empty.
func TestEraseRequester(t *testing.T) {
	t.Parallel()
	srv := newServer(t, orgKeyring())
	mark := randomSuffix()
	neo4jtest.Forget(t, mark)
	org := graph.Org("acme")
	as := func(who, key string) client {
		return client{t: t, base: srv.URL, key: orgKeys[key], requester: "erase-" + who + "-" + mark}
	}
	alice, bob, admin := as("alice", "acme"), as("bob", "acme"), as("root", "acme-admin")
	a1, a2, b1 := "erase-a1-"+mark, "erase-a2-"+mark, "erase-b1-"+mark
	owned, joined := "erase-owned-"+mark, "erase-joined-"+mark
	alice.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": a1}, nil)
	alice.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": a2}, nil)
	bob.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": b1}, nil)
	admin.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": owned, "owner_id": alice.requester}, nil)
	admin.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": joined, "owner_id": bob.requester}, nil)
	for _, m := range []struct{ team, who, role string }{
		{owned, alice.requester, "writer"}, {owned, bob.requester, "writer"}, {joined, alice.requester, "reader"},
	} {
		admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+m.team+"/members/"+m.who, map[string]any{"role": m.role}, nil)
	}
	admin.must(http.StatusNoContent, "PUT", "/v1/promoters/"+alice.requester, nil, nil)
	alice.must(http.StatusNoContent, "PUT", "/v1/agents/"+a1+"/shares/"+bob.requester, nil, nil)
	bob.must(http.StatusNoContent, "PUT", "/v1/agents/"+b1+"/shares/"+alice.requester, nil, nil)
	// A delegation of one of hers and one she holds of bob's.
	alice.must(http.StatusNoContent, "PUT", "/v1/agents/"+a1+"/delegates/"+bob.requester, map[string]any{"role": "writer"}, nil)
	bob.must(http.StatusNoContent, "PUT", "/v1/agents/"+b1+"/delegates/"+alice.requester, map[string]any{"role": "writer"}, nil)
	p := org.Prefix()
	shared := org.Shared(alice.requester).GroupID()
	ingest(t, p+"agent-"+a1+"-", p+"agent-"+a2+"-", p+"agent-"+b1+"-", shared, p+"team-"+owned, p+"global")

	write := func(as client, agent, visibility, text string) string {
		body := map[string]any{"agent_id": agent, "messages": text, "visibility": visibility}
		if visibility == "team" {
			body["team"] = owned
		}
		var a added
		as.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
		return a.ID
	}
	private := write(alice, a1, "private", "Erin works at Hooli.")
	public := write(alice, a1, "public", "Frank lives in Oslo.")
	inShared := write(alice, a2, "shared", "Gina works at Initech.")
	inTeam := write(alice, a1, "team", "Hank works at Globex.")
	bobs := write(bob, b1, "team", "Ivan lives in Bergen.")
	bobsPrivate := write(bob, b1, "private", "Judy works at Vandelay.")
	for _, id := range []string{private, public, inShared, inTeam} {
		waitStatus(t, alice, id)
	}
	waitStatus(t, bob, bobs)
	waitStatus(t, bob, bobsPrivate)
	for _, id := range []string{private, bobs} { // a version of its own, and its change of bob's
		if s, body := alice.patch(id, "", map[string]any{"tags": []string{"seen"}}); s != http.StatusOK {
			t.Fatalf("alice updating %s: %d %s", id, s, body)
		}
	}
	var copied added
	alice.must(http.StatusAccepted, "POST", "/v1/memories/"+public+"/promote", map[string]any{"target": "global"}, &copied)
	var fromShared added
	alice.must(http.StatusAccepted, "POST", "/v1/memories/"+inShared+"/promote", map[string]any{"target": "team:" + owned}, &fromShared)
	conflict := neo4jtest.SeedConflict(t, p+"team-"+owned, "Kim"+mark)
	alice.must(http.StatusOK, "POST", "/v1/conflicts/"+conflict+"/resolve", map[string]any{"keep": "both"}, nil)
	waitStatus(t, alice, copied.ID)
	waitStatus(t, alice, fromShared.ID)

	erased := []string{p + "agent-" + a1 + "-", p + "agent-" + a2 + "-", shared}
	others := []string{p + "agent-" + b1 + "-", p + "team-" + owned, p + "global"}
	census := func(prefixes []string) (out []int64) {
		for _, prefix := range prefixes {
			n, r := neo4jtest.Census(t, prefix)
			out = append(out, n, r)
		}
		return out
	}
	before := census(others)
	if c := census(erased); c[0] == 0 || c[4] == 0 {
		t.Fatalf("nothing stored in the spaces to erase: %v", c)
	}

	// Refused, whether or not the id exists: another requester, and the person
	// itself through a host key; each refusal audited.
	path := "/v1/requesters/" + alice.requester
	for _, c := range []struct {
		name string
		as   client
		path string
	}{
		{"another requester", bob, path},
		{"the person through a host key", alice, path + "?dry_run=true"},
		{"another requester, an unknown id", bob, "/v1/requesters/erase-nobody-" + mark},
	} {
		if s, body := c.as.do("DELETE", c.path, nil); s != http.StatusForbidden {
			t.Errorf("%s: %d %s, want 403", c.name, s, body)
		}
	}
	var denied struct{ Events []eventOf }
	admin.must(http.StatusOK, "GET", "/v1/audit?kind=namespace_denied&subject="+alice.requester, nil, &denied)
	if len(denied.Events) != 2 {
		t.Errorf("refused erasures audited: %+v, want bob's and alice's own", denied.Events)
	}
	for _, c := range []struct {
		path   string
		status int
	}{
		// Nothing of it: not even an audit event (bob's refusal above names erase-nobody).
		{"/v1/requesters/erase-ghost-" + mark, http.StatusNotFound},
		{"/v1/requesters/Not-An-Id", http.StatusBadRequest},
		{path + "?dry_run=maybe", http.StatusBadRequest},
		{path + "?force=true", http.StatusBadRequest},
	} {
		if s, body := admin.sendMalformed("DELETE", c.path, nil); s != c.status {
			t.Errorf("DELETE %s: %d %s, want %d", c.path, s, body, c.status)
		}
	}

	events := auditOf(admin, alice.requester)
	agentEvents := map[string]eventOf{}
	for _, a := range []string{a1, a2} {
		maps.Copy(agentEvents, auditOf(admin, a))
	}
	if len(agentEvents) == 0 {
		t.Fatal("no audit event is about the agents it owns: the test would prove nothing")
	}
	var dry, real requesterErasure
	admin.must(http.StatusOK, "DELETE", path+"?dry_run=true", nil, &dry)
	if got := census(erased); got[0] == 0 {
		t.Fatal("the dry run erased something")
	}
	admin.must(http.StatusOK, "DELETE", path, nil, &real)
	neo4jtest.Forget(t, real.Pseudonym)
	want := real
	want.DryRun, want.Pseudonym = true, ""
	if !strings.HasPrefix(real.Pseudonym, "erased-") || real.DryRun || dry != want {
		t.Fatalf("dry run %+v and erasure %+v disagree", dry, real)
	}
	if real.Agents != 2 || real.Memories != 3 || real.Versions != 1 || real.Entities == 0 || real.Facts == 0 ||
		real.Shares != 2 || real.Delegations != 2 || real.Memberships != 2 || !real.Promoter || real.Teams != 1 ||
		real.Pseudonymized < 5 || real.AuditEvents < len(events) {
		t.Errorf("erasure %+v: want 2 agents, 3 memories, 1 version, entities and facts, 2 shares, 2 delegations, 2 memberships, "+
			"the promoter role, 1 team, at least 5 memories of other spaces and %d audit events", real, len(events))
	}

	for i, c := range census(erased) {
		if c != 0 {
			t.Errorf("%s: %d %s left", erased[i/2], c, []string{"nodes", "relationships"}[i%2])
		}
	}
	if n := traces(t, org, alice.requester); n != 0 {
		t.Errorf("%d nodes and relationships of %s still name the erased requester", n, org)
	}
	if n := traces(t, org, bob.requester); n == 0 {
		t.Error("no node names bob either: the scan for the erased requester finds nothing")
	}
	if after := census(others); !slices.Equal(after, before) {
		t.Errorf("other people's spaces changed: %v, before %v", after, before)
	}

	var team struct {
		OwnerID string            `json:"owner_id"`
		Members map[string]string `json:"members"`
	}
	admin.must(http.StatusOK, "GET", "/v1/teams/"+owned, nil, &team)
	if team.OwnerID != real.Pseudonym || team.Members[bob.requester] != "writer" || len(team.Members) != 1 {
		t.Errorf("the team it owned: %+v, want owned by %s with bob still a writer", team, real.Pseudonym)
	}
	for _, id := range []string{bobs, inTeam, fromShared.ID} {
		var m struct {
			PromotedBy string `json:"promoted_by"`
		}
		bob.must(http.StatusOK, "GET", "/v1/memories/"+id, nil, &m) // what it wrote stays (traces checked whom it names)
		if m.PromotedBy == alice.requester {
			t.Errorf("team memory %s still names the erased requester: %+v", id, m)
		}
	}
	// What stays of its agents' memories (in the team, in global) names their
	// pseudonyms, never the agents' ids.
	var stays struct {
		AgentID string `json:"agent_id"`
	}
	bob.must(http.StatusOK, "GET", "/v1/memories/"+inTeam, nil, &stays)
	if !strings.HasPrefix(stays.AgentID, real.Pseudonym+"-agent-") {
		t.Errorf("its team memory's agent is %q, want its agent's pseudonym", stays.AgentID)
	}
	if n := neo4jtest.Count(t, "MATCH (n) WHERE n.agent_id IN $agents RETURN count(n)", map[string]any{"agents": []string{a1, a2}}); n != 0 {
		t.Errorf("%d nodes still carry the erased agents' ids", n)
	}
	bob.must(http.StatusOK, "GET", "/v1/memories/"+copied.ID, nil, nil)
	bob.must(http.StatusOK, "GET", "/v1/memories/"+bobsPrivate, nil, nil)

	if gone := auditOf(admin, alice.requester); len(gone) != 0 {
		t.Errorf("audit events still naming the erased requester: %+v", gone)
	}
	now := auditOf(admin, real.Pseudonym)
	for id, was := range events {
		is, ok := now[id]
		if !ok || is.Kind != was.Kind || !is.At.Equal(was.At) {
			t.Errorf("audit event %+v became %+v, want its kind and time under the pseudonym", was, is)
		}
	}
	// The agents it owned are named by pseudonyms of their own in what audit keeps.
	for _, a := range []string{a1, a2} {
		if gone := auditOf(admin, a); len(gone) != 0 {
			t.Errorf("audit events still naming its agent %s: %+v", a, gone)
		}
	}
	renamed := map[string]eventOf{}
	for _, n := range []string{"-agent-1", "-agent-2"} {
		maps.Copy(renamed, auditOf(admin, real.Pseudonym+n))
	}
	for id, was := range agentEvents {
		if is, ok := renamed[id]; !ok || is.Kind != was.Kind || !is.At.Equal(was.At) {
			t.Errorf("audit event %+v about its agent became %+v, want it kept under the agent's pseudonym", was, is)
		}
	}
	// Nothing of it in /metrics either.
	_, scraped := do(t, "GET", srv.URL+"/metrics", nil, "")
	for _, name := range []string{alice.requester, a1, a2, real.Pseudonym, mark} {
		if strings.Contains(string(scraped), name) {
			t.Errorf("/metrics names %q after the erasure", name)
		}
	}
	// Its pseudonym is no requester: no credential may name it, so none owns its team;
	// nor is it, or its agents', an id anything takes.
	for _, key := range []string{"acme", "acme-admin"} {
		as := client{t: t, base: srv.URL, key: orgKeys[key], requester: real.Pseudonym}
		if s, body := as.sendMalformed("GET", "/v1/teams/"+owned, nil); s != http.StatusBadRequest {
			t.Errorf("the %s key naming the pseudonym: %d %s, want 400", key, s, body)
		}
	}
	for what, c := range map[string]struct {
		method, path string
		body         any
	}{
		"a member":         {"PUT", "/v1/teams/" + owned + "/members/" + real.Pseudonym, map[string]any{"role": "writer"}},
		"the promoter":     {"PUT", "/v1/promoters/" + real.Pseudonym, nil},
		"an owner":         {"PUT", "/v1/agents/" + b1 + "/owner", map[string]any{"owner_id": real.Pseudonym}},
		"an agent":         {"POST", "/v1/agents", map[string]any{"id": real.Pseudonym + "-agent-1"}},
		"erased again":     {"DELETE", "/v1/requesters/" + real.Pseudonym, nil},
		"a share's holder": {"PUT", "/v1/agents/" + b1 + "/shares/" + real.Pseudonym, nil},
	} {
		as := admin
		if what == "an owner" || what == "a share's holder" {
			as = bob
		}
		if s, body := as.sendMalformed(c.method, c.path, c.body); s != http.StatusBadRequest {
			t.Errorf("the pseudonym as %s: %d %s, want 400", what, s, body)
		}
	}
	var erasure struct{ Events []eventOf }
	admin.must(http.StatusOK, "GET", "/v1/audit?kind=requester_erased&subject="+real.Pseudonym, nil, &erasure)
	if len(erasure.Events) != 1 || erasure.Events[0].Actor != admin.requester {
		t.Errorf("the erasure's own event: %+v, want one by %s", erasure.Events, admin.requester)
	}
	if s, body := admin.do("DELETE", path, nil); s != http.StatusNotFound {
		t.Errorf("erasing it again: %d %s, want 404", s, body)
	}

	// The same id again: a new person with nothing.
	var agents struct{ Agents []any }
	alice.must(http.StatusOK, "GET", "/v1/agents", nil, &agents)
	var teams struct{ Teams []any }
	alice.must(http.StatusOK, "GET", "/v1/teams", nil, &teams)
	if len(agents.Agents) != 0 || len(teams.Teams) != 0 {
		t.Errorf("the id created again has agents %v and teams %v", agents.Agents, teams.Teams)
	}
	alice.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": a1}, nil)
	var list struct{ Memories []any }
	alice.must(http.StatusOK, "GET", "/v1/memories?agent_id="+a1, nil, &list)
	if len(list.Memories) != 0 {
		t.Errorf("the new agent %s lists %d memories", a1, len(list.Memories))
	}
	for _, id := range []string{private, inShared, bobsPrivate} { // its, its shared space's, and bob's shared with it
		if s, _ := alice.do("GET", "/v1/memories/"+id, nil); s != http.StatusNotFound {
			t.Errorf("the id created again reads %s: %d, want 404", id, s)
		}
	}
}

// TestEraseRequester_Self: an end user erases itself with its own JWT: its
// pseudonym is the event's actor and its token's host is named nowhere any more;
// another end user's token is refused. The users are of organization initech, which
// their tokens' tenant claim names (so the scan of what names them reads one
// organization's nodes, not the whole test database's).
func TestEraseRequester_Self(t *testing.T) {
	t.Parallel()
	key := idptest.RSAKey(t, "k1")
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	idptest.WriteJWKS(t, jwks, key)
	v, err := idp.New(context.Background(), idp.Options{Issuer: idptest.Issuer, Audience: idptest.Audience, JWKSFile: jwks, OrgClaim: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServerWith(t, []access.KeySpec{{Name: "initech-ops", SHA256: access.HashKey("key-initech-ops"), Trusted: true, Admin: true, Org: "initech"}},
		v, func(*service.Service) {})
	base, suffix := srv.URL, randomSuffix()
	neo4jtest.Forget(t, suffix)
	root := client{t: t, base: base, key: "key-initech-ops", requester: "root-" + suffix}
	token := func(user string) string {
		now := time.Now()
		return key.Sign(t, jwt.MapClaims{"iss": idptest.Issuer, "aud": idptest.Audience, "sub": user, "tenant": "initech",
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	}
	org := graph.Org("initech")
	user := "jwt-erase-" + suffix
	self := client{t: t, base: base, key: token(user)}
	other := client{t: t, base: base, key: token("jwt-other-" + suffix)}
	agent := "jwt-erase-agent-" + suffix
	self.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	self.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "a note"}, nil)
	self.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "ours", "visibility": "shared"}, nil)
	if s, _ := self.do("GET", "/v1/audit", nil); s != http.StatusForbidden { // an event with its token's host
		t.Fatalf("an end user reading the audit log: %d, want 403", s)
	}
	path := "/v1/requesters/" + user
	if s, body := other.do("DELETE", path, nil); s != http.StatusForbidden {
		t.Errorf("another end user erasing it: %d %s, want 403", s, body)
	}
	var dry, real requesterErasure
	self.must(http.StatusOK, "DELETE", path+"?dry_run=true", nil, &dry)
	self.must(http.StatusOK, "DELETE", path, nil, &real)
	neo4jtest.Forget(t, real.Pseudonym)
	if dry.Agents != 1 || dry.Memories != 2 || real.Agents != 1 || real.Memories != 2 || real.AuditEvents < 2 {
		t.Errorf("dry run %+v, erasure %+v: want 1 agent, 2 memories, its events", dry, real)
	}
	var erasure struct{ Events []eventOf }
	root.must(http.StatusOK, "GET", "/v1/audit?kind=requester_erased&subject="+real.Pseudonym, nil, &erasure)
	if len(erasure.Events) != 1 || erasure.Events[0].Actor != real.Pseudonym || erasure.Events[0].HostKey != "jwt:"+org.Prefix()+real.Pseudonym {
		t.Errorf("the erasure's own event: %+v, want one by the pseudonym through its host", erasure.Events)
	}
	if n := traces(t, org, user); n != 0 {
		t.Errorf("%d nodes and relationships still name the erased end user", n)
	}
	if n := traces(t, org, "jwt-other-"+suffix); n == 0 {
		t.Error("no node names the other end user either: the scan for the erased one finds nothing")
	}
}
