package handlers_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// listPage is a page of any list route.
type listPage struct {
	Items      []map[string]any `json:"items"`
	NextCursor string           `json:"next_cursor"`
	HasMore    bool             `json:"has_more"`
}

// walk reads a list page by page, limit items a page, at most pages pages, and
// checks each page: no more than limit items, has_more exactly when a next_cursor
// comes, a full page whenever one more follows. A route path with a query takes the
// cursor and limit after it.
func walk(t *testing.T, c client, path string, limit, pages int) (items []map[string]any, read int) {
	t.Helper()
	cursor := ""
	for read = 1; read <= pages; read++ {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		page := listPage{}
		c.must(http.StatusOK, "GET", path+sep+"limit="+itoa(limit)+"&cursor="+url.QueryEscape(cursor), nil, &page)
		if page.Items == nil {
			t.Fatalf("GET %s: items is not a list", path)
		}
		if len(page.Items) > limit || page.HasMore != (page.NextCursor != "") || (page.HasMore && len(page.Items) != limit) {
			t.Fatalf("GET %s page %d: %d items of %d, has_more %v, next_cursor %q", path, read, len(page.Items), limit, page.HasMore, page.NextCursor)
		}
		items = append(items, page.Items...)
		if !page.HasMore {
			return items, read
		}
		cursor = page.NextCursor
	}
	return items, read - 1
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// ids lists the items' key field in order, and fails on a duplicate: a walk over
// pages shows each item once.
func ids(t *testing.T, items []map[string]any, key string) []string {
	t.Helper()
	var out []string
	for _, it := range items {
		id, _ := it[key].(string)
		if slices.Contains(out, id) {
			t.Fatalf("%s %s listed twice", key, id)
		}
		out = append(out, id)
	}
	return out
}

// mustRefuse sends a request outside openapi.json on purpose (or a refused one) and
// checks the one error shape with the status and code.
func mustRefuse(t *testing.T, c client, path string, status int, code string) {
	t.Helper()
	resp, body := doMalformed(t, "GET", c.base+path, map[string]string{
		"Authorization": "Bearer " + c.key, "X-Requester-Id": c.requester}, "")
	mustErrorBody(t, resp, body, status, code)
}

// denied counts the namespace_denied events of actor about subject, read by an admin.
func denied(c client, actor, subject string) int {
	root := client{t: c.t, base: c.base, key: matrixKeys["admin"], requester: "root-auditor"}
	var page struct{ Events []struct{ Subject string } }
	root.must(http.StatusOK, "GET", "/v1/audit?limit=100&kind=namespace_denied&actor="+actor, nil, &page)
	n := 0
	for _, e := range page.Events {
		if e.Subject == subject {
			n++
		}
	}
	return n
}

// foreignCursor is a well-formed cursor of the kind the other lists issue: a (name, id)
// cursor for the lists newest first, a (time, id) one for the entities.
func foreignCursor(byName bool) string {
	b := []byte(`{"t":"2024-01-01T00:00:00Z","i":"x"}`)
	if byName {
		b = []byte(`{"n":"x","i":"x"}`)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// without is m without the keys.
func without(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

// TestListAgents: GET /v1/agents lists the agents the requester owns or holds a share
// in force of, newest first, each exactly as GET /v1/agents/{id} shows it to the
// requester, with its relation. Denied: another owner's agents, a lapsed share, a
// revoked share; all and owner from a non-admin host (403, audited). An admin host
// lists every agent or one owner's. Pages of one: no duplicate, no gap. Bad cursors
// and parameters are 400.
func TestListAgents(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := &world{base: srv.URL, t: t, suffix: randomSuffix()}
	neo4jtest.Forget(t, w.suffix)
	alice, bob, carol, root := w.as("alice", "trusted"), w.as("bob", "trusted"), w.as("carol", "trusted"), w.as("root", "admin")
	confined := w.as("bob", "confined")

	a1, a2, a3 := w.id("a1"), w.id("a2"), w.id("a3")
	for _, id := range []string{a1, a2, a3} {
		alice.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": id}, nil)
	}
	private, shared, lapsed, revoked := w.id("b-private"), w.id("b-shared"), w.id("b-lapsed"), w.id("b-revoked")
	for _, id := range []string{private, shared, lapsed, revoked} {
		bob.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": id}, nil)
	}
	mine := w.id("r1")
	root.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": mine}, nil)
	// Before its lapse a share lists the agent; after it, not.
	lapse := time.Now().Add(4 * time.Second)
	bob.must(http.StatusNoContent, "PUT", "/v1/agents/"+lapsed+"/shares/"+alice.requester, map[string]any{"expires_at": lapse.UTC().Format(time.RFC3339Nano)}, nil)
	before, _ := walk(t, alice, "/v1/agents", 100, 1)
	if !slices.Contains(ids(t, before, "id"), lapsed) {
		t.Errorf("a share in force does not list the agent: %v", ids(t, before, "id"))
	}
	bob.must(http.StatusNoContent, "PUT", "/v1/agents/"+shared+"/shares/"+alice.requester, nil, nil)
	bob.must(http.StatusNoContent, "PUT", "/v1/agents/"+revoked+"/shares/"+alice.requester, nil, nil)
	bob.must(http.StatusNoContent, "DELETE", "/v1/agents/"+revoked+"/shares/"+alice.requester, nil, nil)
	alice.must(http.StatusNoContent, "PUT", "/v1/agents/"+a1+"/shares/"+carol.requester, nil, nil)
	// Wait until the store itself counts the share lapsed (its owner sees it marked).
	for deadline, wait := time.Now().Add(30*time.Second), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
		var a struct {
			Shares []struct {
				Principal string `json:"principal"`
				Expired   bool   `json:"expired"`
			} `json:"shares"`
		}
		bob.must(http.StatusOK, "GET", "/v1/agents/"+lapsed, nil, &a)
		if len(a.Shares) == 1 && a.Shares[0].Principal == alice.requester && a.Shares[0].Expired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the share of %s never lapsed: %+v", lapsed, a.Shares)
		}
	}

	// asGet checks that each item is the agent as GET /v1/agents/{id} shows it to c,
	// and has the relation.
	asGet := func(c client, items []map[string]any, relation map[string]string) {
		t.Helper()
		for _, it := range items {
			id, _ := it["id"].(string)
			if it["relation"] != relation[id] {
				t.Errorf("%s lists %s with relation %v, want %q", c.requester, id, it["relation"], relation[id])
			}
			var got map[string]any
			c.must(http.StatusOK, "GET", "/v1/agents/"+id, nil, &got)
			if item := without(it, "relation"); !reflect.DeepEqual(item, got) {
				t.Errorf("%s lists %s as\n%v\nbut GET shows\n%v", c.requester, id, item, got)
			}
		}
	}

	t.Run("OwnedAndShared", func(t *testing.T) {
		items, pages := walk(t, alice, "/v1/agents", 1, 10)
		if got, want := ids(t, items, "id"), []string{shared, a3, a2, a1}; !slices.Equal(got, want) {
			t.Fatalf("alice's agents %v, want %v, newest first (not bob's private agent, the lapsed or the revoked share)", got, want)
		}
		if pages != 4 {
			t.Errorf("4 agents in pages of 1 took %d pages", pages)
		}
		asGet(alice, items, map[string]string{shared: "shared", a1: "owner", a2: "owner", a3: "owner"})
	})
	t.Run("ShareHolderSeesNoMore", func(t *testing.T) {
		items, _ := walk(t, carol, "/v1/agents", 20, 1)
		if got := ids(t, items, "id"); !slices.Equal(got, []string{a1}) {
			t.Fatalf("carol's agents %v, want the one shared with her", got)
		}
		asGet(carol, items, map[string]string{a1: "shared"})
		for _, key := range []string{"owner_id", "shares", "shared_with"} {
			if _, ok := items[0][key]; ok {
				t.Errorf("a share holder sees %s of the agent: %v", key, items[0])
			}
		}
		items, _ = walk(t, alice, "/v1/agents", 20, 1)
		if items[3]["id"] != a1 || !strings.Contains(mustJSON(t, items[3]["shares"]), carol.requester) {
			t.Errorf("the owner's list lacks the agent's shares: %v", items[3])
		}
	})
	t.Run("Admin", func(t *testing.T) {
		own, _ := walk(t, root, "/v1/agents", 20, 1)
		if got := ids(t, own, "id"); !slices.Equal(got, []string{mine}) {
			t.Errorf("an admin host without all lists %v, want only its own agent", got)
		}
		for _, q := range []string{"?owner=" + alice.requester, "?owner=" + alice.requester + "&all=true"} {
			items, _ := walk(t, root, "/v1/agents"+q, 2, 10)
			if got := ids(t, items, "id"); !slices.Equal(got, []string{a3, a2, a1}) {
				t.Errorf("%s: %v, want alice's three", q, got)
			}
			asGet(root, items, map[string]string{a1: "none", a2: "none", a3: "none"})
		}
		want := []string{mine, revoked, lapsed, shared, private, a3, a2, a1}
		all, pages := walk(t, root, "/v1/agents?all=true", 100, 50)
		got := ids(t, all, "id")
		var ours []string
		for _, id := range got {
			if slices.Contains(want, id) {
				ours = append(ours, id)
			}
		}
		if !slices.Equal(ours, want) {
			t.Errorf("all=true (%d agents in %d pages) shows of this test's agents %v, want %v", len(got), pages, ours, want)
		}
		for _, it := range all {
			if slices.Contains(want, it["id"].(string)) {
				relation := "none"
				if it["id"] == mine {
					relation = "owner"
				}
				if it["relation"] != relation || it["owner_id"] == nil {
					t.Errorf("all=true lists %v: want relation %s and its owner", it, relation)
				}
			}
		}
	})
	t.Run("AdminParametersRefused", func(t *testing.T) {
		before := denied(bob, bob.requester, "agents")
		for _, c := range []client{bob, confined} {
			mustRefuse(t, c, "/v1/agents?all=true", http.StatusForbidden, "forbidden")
			mustRefuse(t, c, "/v1/agents?owner="+alice.requester, http.StatusForbidden, "forbidden")
		}
		if n := denied(bob, bob.requester, "agents") - before; n != 4 {
			t.Errorf("%d namespace_denied events for 4 refusals", n)
		}
	})
	t.Run("BadRequests", func(t *testing.T) {
		for _, q := range []string{"?cursor=garbage", "?cursor=" + foreignCursor(true), "?limit=-1", "?limit=two",
			"?all=yes", "?owner=Not-An-Id!", "?ownr=" + alice.requester, "?all=false&all=true"} {
			t.Run(q, func(t *testing.T) { mustRefuse(t, alice, "/v1/agents"+q, http.StatusBadRequest, "invalid") })
		}
	})
}

// TestListTeams: GET /v1/teams lists the teams the requester is a member or the owner
// of, newest first, with its role. Denied: a team it left, another requester's team;
// all=true from a non-admin host (403, audited). An admin host lists every team.
// Pages of one: no duplicate, no gap. Bad cursors and parameters are 400.
func TestListTeams(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := &world{base: srv.URL, t: t, suffix: randomSuffix()}
	neo4jtest.Forget(t, w.suffix)
	alice, bob, carol, root := w.as("alice", "trusted"), w.as("bob", "trusted"), w.as("carol", "trusted"), w.as("root", "admin")
	confined := w.as("alice", "confined")
	t1, t2, left, t4, owned := w.id("t1"), w.id("t2"), w.id("left"), w.id("t4"), w.id("owned")
	for _, team := range []string{t1, t2, left, t4} {
		root.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
	}
	root.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": owned, "owner_id": alice.requester}, nil)
	member := func(team string, c client, role string) {
		root.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+c.requester, map[string]any{"role": role}, nil)
	}
	member(t1, alice, "writer")
	member(t2, alice, "reader")
	member(left, alice, "writer")
	member(t4, bob, "writer")
	root.must(http.StatusNoContent, "DELETE", "/v1/teams/"+left+"/members/"+alice.requester, nil, nil)

	// check compares each item with GET /v1/teams/{team} as c sees it, and its role.
	check := func(c client, items []map[string]any, role map[string]string) {
		t.Helper()
		for _, it := range items {
			name, _ := it["name"].(string)
			var got map[string]any
			c.must(http.StatusOK, "GET", "/v1/teams/"+name, nil, &got)
			if want := without(got, "members"); !reflect.DeepEqual(without(it, "role"), want) {
				t.Errorf("%s lists %s as %v, GET shows %v", c.requester, name, it, want)
			}
			if r, _ := it["role"].(string); r != role[name] {
				t.Errorf("%s lists %s with role %q, want %q", c.requester, name, r, role[name])
			}
		}
	}
	t.Run("MembersAndOwner", func(t *testing.T) {
		items, pages := walk(t, alice, "/v1/teams", 1, 10)
		if got, want := ids(t, items, "name"), []string{owned, t2, t1}; !slices.Equal(got, want) {
			t.Fatalf("alice's teams %v, want %v, newest first (not the team she left, not bob's)", got, want)
		}
		if pages != 3 {
			t.Errorf("3 teams in pages of 1 took %d pages", pages)
		}
		check(alice, items, map[string]string{t1: "writer", t2: "reader", owned: ""})
		items, _ = walk(t, bob, "/v1/teams", 20, 1)
		if got := ids(t, items, "name"); !slices.Equal(got, []string{t4}) {
			t.Errorf("bob's teams %v, want only %s", got, t4)
		}
		check(bob, items, map[string]string{t4: "writer"})
		if items, _ := walk(t, carol, "/v1/teams", 20, 1); len(items) != 0 {
			t.Errorf("carol, in no team, lists %v", items)
		}
	})
	t.Run("Admin", func(t *testing.T) {
		own, _ := walk(t, root, "/v1/teams", 20, 1)
		if got := ids(t, own, "name"); !slices.Equal(got, []string{t4, left, t2, t1}) {
			t.Errorf("the admin requester without all lists %v, want the four teams it owns", got)
		}
		want := []string{owned, t4, left, t2, t1}
		all, pages := walk(t, root, "/v1/teams?all=true", 100, 50)
		var ours []string
		for _, name := range ids(t, all, "name") {
			if slices.Contains(want, name) {
				ours = append(ours, name)
			}
		}
		if !slices.Equal(ours, want) {
			t.Errorf("all=true (%d teams in %d pages) shows of this test's teams %v, want %v", len(all), pages, ours, want)
		}
	})
	t.Run("AllRefused", func(t *testing.T) {
		before := denied(alice, alice.requester, "teams")
		mustRefuse(t, alice, "/v1/teams?all=true", http.StatusForbidden, "forbidden")
		mustRefuse(t, confined, "/v1/teams?all=true", http.StatusForbidden, "forbidden")
		if n := denied(alice, alice.requester, "teams") - before; n != 2 {
			t.Errorf("%d namespace_denied events for 2 refusals", n)
		}
	})
	t.Run("BadRequests", func(t *testing.T) {
		for _, q := range []string{"?cursor=garbage", "?cursor=" + foreignCursor(true), "?limit=-2", "?limit=1.5",
			"?all=1", "?owner=" + alice.requester, "?all=true&all=true"} {
			t.Run(q, func(t *testing.T) { mustRefuse(t, alice, "/v1/teams"+q, http.StatusBadRequest, "invalid") })
		}
	})
}

// TestListEntities: GET /v1/entities and MCP list_entities list the entities of the
// spaces GET /v1/facts lists for the agent, by name without case, then id, each as GET
// /v1/entities/{id} shows it, filtered by type and name prefix. Denied: another owner's
// private entity (a decoy with a unique name, also one named like the owner's), the
// agent's private space for a requester without a share or after its revocation, a
// team's space after the requester left it. A missing agent is 404 as for the facts;
// pages of two: no duplicate, no gap; bad parameters and cursors are 400.
func TestListEntities(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := &world{base: srv.URL, t: t, suffix: randomSuffix()}
	neo4jtest.Forget(t, w.suffix)
	alice, bob, carol, root := w.as("alice", "trusted"), w.as("bob", "trusted"), w.as("carol", "trusted"), w.as("root", "admin")
	agent, decoyAgent, team := w.id("a"), w.id("b"), w.id("team")
	alice.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	bob.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": decoyAgent}, nil)
	root.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
	root.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+alice.requester, map[string]any{"role": "writer"}, nil)
	root.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+carol.requester, map[string]any{"role": "reader"}, nil)
	ingest(t, "agent-"+agent+"-", "agent-"+decoyAgent+"-", "team-"+team)
	// The decoy's name is unique to the run (letters only, so the offline extractor
	// takes it for a name).
	decoy := "Halvor" + strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return 'a' + r - '0'
		}
		return r
	}, w.suffix)
	for _, m := range []struct {
		as                      client
		agent, text, visibility string
	}{
		{alice, agent, "Priya Natarajan works at Halvorsen Logistics.", "private"},
		{alice, agent, "Erik Lund lives in Oslo.", "private"},
		{alice, agent, "Hanna Berg lives in Bergen.", "public"},
		{alice, agent, "Ingrid Holm works at Fjordline.", "team"},
		{bob, decoyAgent, decoy + " works at Halvorsen Logistics.", "private"},
	} {
		var a added
		body := map[string]any{"agent_id": m.agent, "messages": m.text, "visibility": m.visibility}
		if m.visibility == "team" {
			body["team"] = team
		}
		m.as.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
		waitStatus(t, m.as, a.ID)
	}
	private, public, teamSpace := "agent-"+agent+"-private", "agent-"+agent+"-public", "team-"+team

	// list reads every entity c sees for the agent with the query, in pages of limit,
	// checks the order and that each is what GET /v1/entities/{id} shows c, and returns
	// this test's entities (global entities of other tests may be listed too) by name.
	list := func(c client, ofAgent, query string, limit int) (names []string, items []map[string]any) {
		t.Helper()
		all, _ := walk(t, c, "/v1/entities?agent_id="+ofAgent+query, limit, 50)
		ids(t, all, "id")
		for i, it := range all {
			if i > 0 {
				prev := all[i-1]
				pk, k := strings.ToLower(prev["name"].(string)), strings.ToLower(it["name"].(string))
				if pk > k || (pk == k && prev["id"].(string) > it["id"].(string)) {
					t.Errorf("%v before %v: not by name, then id", prev["name"], it["name"])
				}
			}
			if c.requester != bob.requester && (strings.Contains(it["name"].(string), decoy) || it["group_id"] == "agent-"+decoyAgent+"-private") {
				t.Errorf("%s lists another owner's private entity %v", c.requester, it)
			}
			if g := it["group_id"].(string); !strings.Contains(g, w.suffix) {
				continue
			}
			var got map[string]any
			c.must(http.StatusOK, "GET", "/v1/entities/"+it["id"].(string), nil, &got)
			if !reflect.DeepEqual(it, got) {
				t.Errorf("listed as %v, GET shows %v", it, got)
			}
			names = append(names, it["name"].(string))
			items = append(items, it)
		}
		return names, items
	}
	inSpaces := func(items []map[string]any, spaces ...string) {
		t.Helper()
		for _, it := range items {
			if !slices.Contains(spaces, it["group_id"].(string)) {
				t.Errorf("%v listed, outside %v", it, spaces)
			}
		}
	}
	everything := []string{"Bergen", "Erik Lund", "Fjordline", "Halvorsen Logistics", "Hanna Berg", "Ingrid Holm", "Oslo", "Priya Natarajan"}

	t.Run("Owner", func(t *testing.T) {
		names, items := list(alice, agent, "", 2)
		if !slices.Equal(names, everything) {
			t.Errorf("alice's entities %v, want %v", names, everything)
		}
		inSpaces(items, private, public, teamSpace)
		if names, _ := list(alice, agent, "", 100); !slices.Equal(names, everything) {
			t.Errorf("in one page %v", names)
		}
		names, items = list(alice, agent, "&type=Person", 1)
		if !slices.Equal(names, []string{"Erik Lund", "Hanna Berg", "Ingrid Holm", "Priya Natarajan"}) {
			t.Errorf("type=Person: %v", names)
		}
		for _, it := range items {
			if it["type"] != "Person" {
				t.Errorf("type=Person lists %v", it)
			}
		}
		if names, _ := list(alice, agent, "&name_prefix=hALVor", 2); !slices.Equal(names, []string{"Halvorsen Logistics"}) {
			t.Errorf("name_prefix=hALVor: %v, want alice's Halvorsen Logistics only", names)
		}
		if names, _ := list(alice, agent, "&type=Location&name_prefix=b", 2); !slices.Equal(names, []string{"Bergen"}) {
			t.Errorf("type=Location&name_prefix=b: %v", names)
		}
		if names, _ := list(alice, agent, "&name_prefix="+url.QueryEscape(decoy), 2); len(names) != 0 {
			t.Errorf("the decoy's own name lists %v", names)
		}
		// The decoy exists: its owner lists it, and only its own copy of Halvorsen Logistics.
		names, items = list(bob, decoyAgent, "&name_prefix=halvor", 2)
		if !slices.Equal(names, []string{decoy, "Halvorsen Logistics"}) {
			t.Fatalf("bob's entities %v, want his decoy and his Halvorsen Logistics", names)
		}
		inSpaces(items, "agent-"+decoyAgent+"-private")
		// Alice of bob's agent: only what she sees of it (its public space: nothing;
		// her team: Fjordline and Ingrid Holm), as GET /v1/facts answers 200.
		names, _ = list(alice, decoyAgent, "", 10)
		if !slices.Equal(names, []string{"Fjordline", "Ingrid Holm"}) {
			t.Errorf("alice of bob's agent: %v, want her team's entities only", names)
		}
	})
	t.Run("OtherRequesters", func(t *testing.T) {
		names, items := list(bob, agent, "", 3)
		if !slices.Equal(names, []string{"Bergen", "Hanna Berg"}) {
			t.Errorf("bob, no share: %v, want the public entities only", names)
		}
		inSpaces(items, public)
		names, _ = list(carol, agent, "", 3)
		if !slices.Equal(names, []string{"Bergen", "Fjordline", "Hanna Berg", "Ingrid Holm"}) {
			t.Errorf("carol, a team reader: %v, want public and team entities", names)
		}
		alice.must(http.StatusNoContent, "PUT", "/v1/agents/"+agent+"/shares/"+carol.requester, nil, nil)
		if names, _ = list(carol, agent, "", 3); !slices.Equal(names, everything) {
			t.Errorf("carol with a share: %v, want %v", names, everything)
		}
		alice.must(http.StatusNoContent, "DELETE", "/v1/agents/"+agent+"/shares/"+carol.requester, nil, nil)
		root.must(http.StatusNoContent, "DELETE", "/v1/teams/"+team+"/members/"+carol.requester, nil, nil)
		if names, _ = list(carol, agent, "", 3); !slices.Equal(names, []string{"Bergen", "Hanna Berg"}) {
			t.Errorf("carol, share revoked, team left: %v, want the public entities only", names)
		}
	})
	t.Run("MissingAgent", func(t *testing.T) {
		ghost := w.id("ghost")
		for _, path := range []string{"/v1/facts?agent_id=" + ghost, "/v1/entities?agent_id=" + ghost} {
			mustRefuse(t, alice, path, http.StatusNotFound, "not_found")
		}
	})
	t.Run("MCP", func(t *testing.T) {
		session := mcpSession(t, srv.URL, alice.key, alice.requester)
		var viaMCP []map[string]any
		cursor := ""
		for range 20 {
			var page listPage
			args := map[string]any{"agent_id": agent, "limit": 3}
			if cursor != "" {
				args["cursor"] = cursor
			}
			if !callTool(t, session, "list_entities", args, &page) {
				t.Fatalf("list_entities failed: %+v", page)
			}
			viaMCP = append(viaMCP, page.Items...)
			if cursor = page.NextCursor; !page.HasMore {
				break
			}
		}
		rest, _ := walk(t, alice, "/v1/entities?agent_id="+agent, 100, 50)
		// The global space is every test's: its entities may change between the two
		// reads, so the two lists are compared without them.
		ownOnly := func(items []map[string]any) []map[string]any {
			return slices.DeleteFunc(slices.Clone(items), func(e map[string]any) bool { return e["group_id"] == "global" })
		}
		if viaMCP, rest = ownOnly(viaMCP), ownOnly(rest); !reflect.DeepEqual(viaMCP, rest) {
			t.Errorf("list_entities in pages of 3:\n%v\nREST:\n%v", viaMCP, rest)
		}
		var page listPage
		callTool(t, session, "list_entities", map[string]any{"agent_id": agent, "type": "Person", "name_prefix": "pri"}, &page)
		if len(page.Items) != 1 || page.Items[0]["name"] != "Priya Natarajan" {
			t.Errorf("list_entities type Person, name_prefix pri: %v", page.Items)
		}
		callTool(t, session, "list_entities", map[string]any{"agent_id": decoyAgent, "name_prefix": decoy}, &page)
		if len(page.Items) != 0 {
			t.Errorf("list_entities shows bob's decoy: %v", page.Items)
		}
		for _, bad := range []map[string]any{{"agent_id": agent, "type": "not a type"}, {"agent_id": agent, "cursor": "garbage"},
			{"agent_id": agent, "limit": -1}, {"agent_id": agent, "extra": true}, {}} {
			var e toolError
			if callTool(t, session, "list_entities", bad, &e) || e.Error.Code != "invalid" {
				t.Errorf("list_entities %v: %+v, want an invalid tool error", bad, e)
			}
		}
		var e toolError
		if callTool(t, session, "list_entities", map[string]any{"agent_id": w.id("ghost")}, &e) || e.Error.Code != "not_found" {
			t.Errorf("list_entities of a missing agent: %+v, want not_found", e)
		}
	})
	t.Run("BadRequests", func(t *testing.T) {
		a := "/v1/entities?agent_id=" + agent
		for _, path := range []string{"/v1/entities", "/v1/entities?agent_id=Bad!", a + "&type=not-a-type", a + "&type=" + strings.Repeat("T", 65),
			a + "&name_prefix=" + strings.Repeat("x", 101), a + "&name_prefix=%01", a + "&name_prefix=%FF", a + "&limit=-1", a + "&limit=ten",
			a + "&cursor=garbage", a + "&cursor=" + foreignCursor(false), a + "&types=Person", a + "&type=Person&type=Location"} {
			t.Run(path, func(t *testing.T) { mustRefuse(t, alice, path, http.StatusBadRequest, "invalid") })
		}
		// The longest name prefix a name can have is taken.
		alice.must(http.StatusOK, "GET", a+"&name_prefix="+strings.Repeat("é", 100), nil, nil)
	})
}
