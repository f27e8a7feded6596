package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/access/idp"
	"github.com/memgate/memgate/access/idp/idptest"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// assertedEvent is an audit event as GET /v1/audit lists it.
type assertedEvent struct {
	Kind          string   `json:"kind"`
	Actor         string   `json:"actor"`
	HostKey       string   `json:"host_key"`
	Reason        string   `json:"reason"`
	RequestID     string   `json:"request_id"`
	AssertedTeams []string `json:"asserted_teams"`
}

// deniedEvents lists the namespace_denied events of actor, newest first.
func deniedEvents(t *testing.T, root client, actor string) []assertedEvent {
	t.Helper()
	var page struct {
		Events []assertedEvent `json:"events"`
	}
	root.must(http.StatusOK, "GET", "/v1/audit?"+url.Values{"kind": {"namespace_denied"}, "actor": {actor}, "limit": {"100"}}.Encode(), nil, &page)
	return page.Events
}

// TestAssertedTeams: a trusted key with assert_teams names, per request, teams its
// requester belongs to (X-Requester-Teams); they count for that request alone, for
// reads and writes, over REST and MCP. Any other credential sending the header, or a
// team that does not exist, is 403, each refusal one namespace_denied event; a
// malformed header or one given twice is 400; the audit event of a refusal during a
// request that asserted teams records them.
func TestAssertedTeams(t *testing.T) {
	t.Parallel()
	key := idptest.RSAKey(t, "k1")
	path := filepath.Join(t.TempDir(), "jwks.json")
	idptest.WriteJWKS(t, path, key)
	v, err := idp.New(context.Background(), idp.Options{Issuer: idptest.Issuer, Audience: idptest.Audience, JWKSFile: path})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServerWith(t, matrixKeyring(), v, func(*service.Service) {})
	base := srv.URL
	suffix := randomSuffix()
	neo4jtest.Forget(t, suffix)
	id := func(name string) string { return "asserted-" + name + "-" + suffix }
	team, agent, nina := id("team"), id("agent"), id("nina")
	root := client{t: t, base: base, key: matrixKeys["admin"], requester: id("root")}
	writer := client{t: t, base: base, key: matrixKeys["trusted"], requester: id("wendy")}
	root.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
	root.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+writer.requester, map[string]any{"role": "writer"}, nil)
	root.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": id("wagent"), "owner_id": writer.requester}, nil)
	root.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent, "owner_id": nina}, nil)
	var seed added
	writer.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": id("wagent"), "visibility": "team", "team": team,
		"messages": "A memory of the team."}, &seed)

	plain := client{t: t, base: base, key: matrixKeys["asserting"], requester: nina}
	reader, teamWriter := plain, plain
	reader.teams, teamWriter.teams = team, team+":writer"

	t.Run("ReadAndWrite", func(t *testing.T) {
		reader.must(http.StatusOK, "GET", "/v1/memories/"+seed.ID, nil, nil)
		var page struct{ Items []memory }
		reader.must(http.StatusOK, "GET", "/v1/memories?space=team:"+team, nil, &page)
		if len(page.Items) != 1 || page.Items[0].ID != seed.ID {
			t.Errorf("an asserted reader lists %+v, want the team's memory", page.Items)
		}
		var a added
		body := map[string]any{"agent_id": agent, "visibility": "team", "team": team, "messages": "Written by an asserted writer."}
		teamWriter.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
		if a.GroupID != "team-"+team || a.Confined {
			t.Errorf("an asserted writer's team write landed in %s (confined %v)", a.GroupID, a.Confined)
		}
		// Asserted reader, stored writer: the higher role wins (wendy asserts reader).
		wendy := client{t: t, base: base, key: matrixKeys["asserting"], requester: writer.requester, teams: team + ":reader"}
		wendy.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": id("wagent"), "visibility": "team",
			"team": team, "messages": "Still a writer."}, nil)

		// Nothing persists: the next request without the header is refused.
		before := len(deniedEvents(t, root, nina))
		if status, out := plain.do("GET", "/v1/memories/"+seed.ID, nil); status != http.StatusNotFound {
			t.Errorf("without the header nina reads the team's memory: %d %s", status, out)
		}
		if status, out := plain.do("POST", "/v1/memories", body); status != http.StatusForbidden {
			t.Errorf("without the header nina writes to the team: %d %s", status, out)
		}
		var members struct {
			Members map[string]string `json:"members"`
		}
		root.must(http.StatusOK, "GET", "/v1/teams/"+team, nil, &members)
		if _, stored := members.Members[nina]; stored {
			t.Errorf("an asserted membership was stored: %v", members.Members)
		}
		events := deniedEvents(t, root, nina)
		if len(events) != before+1 || len(events[0].AssertedTeams) != 0 {
			t.Errorf("the refusal without the header: %d new events (%+v), want one without asserted teams", len(events)-before, events)
		}
	})

	t.Run("RefusalShowsAssertedTeams", func(t *testing.T) {
		before := len(deniedEvents(t, root, nina))
		status, out := reader.do("DELETE", "/v1/memories/"+seed.ID, nil)
		if status != http.StatusForbidden {
			t.Fatalf("an asserted reader deleting: %d %s, want 403", status, out)
		}
		events := deniedEvents(t, root, nina)
		if len(events) != before+1 || !slices.Equal(events[0].AssertedTeams, []string{team + ":reader"}) {
			t.Fatalf("events %+v, want one more, asserting %s:reader", events, team)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		jwtUser := id("jwt-user")
		for name, c := range map[string]client{
			"confined key":     {key: matrixKeys["confined"], requester: nina, teams: team},
			"key without":      {key: matrixKeys["trusted"], requester: nina, teams: team},
			"admin key":        {key: matrixKeys["admin"], requester: nina, teams: team},
			"JWT":              {key: key.Token(t, jwtUser), teams: team},
			"ghost team":       {key: matrixKeys["asserting"], requester: nina, teams: id("ghost")},
			"one ghost of two": {key: matrixKeys["asserting"], requester: nina, teams: team + ":writer," + id("ghost")},
		} {
			c.t, c.base = t, base
			actor := c.requester
			if actor == "" {
				actor = jwtUser
			}
			before := len(deniedEvents(t, root, actor))
			resp, body := do(t, "GET", base+"/v1/memories/"+seed.ID, c.header(), "")
			mustErrorBody(t, resp, body, http.StatusForbidden, "forbidden")
			events := deniedEvents(t, root, actor)
			if len(events) != before+1 {
				t.Errorf("%s: %d namespace_denied events, want 1", name, len(events)-before)
				continue
			}
			if want, _ := access.ParseAssertedTeams(c.teams); !slices.Equal(events[0].AssertedTeams, access.FormatAssertedTeams(want)) {
				t.Errorf("%s: the event records %v, want %v", name, events[0].AssertedTeams, c.teams)
			}
			if name == "ghost team" && strings.Contains(events[0].Reason, "exist") {
				t.Errorf("the refusal of a ghost team says it does not exist: %q", events[0].Reason)
			}
		}
	})

	t.Run("Malformed", func(t *testing.T) {
		before := len(deniedEvents(t, root, nina))
		for _, teams := range []string{"", "Team", team + ":admin", team + "," + team, team + ",,", ":writer"} {
			c := plain
			c.teams = "set" // header() leaves an empty value out
			h := c.header()
			h["X-Requester-Teams"] = teams
			resp, body := doMalformed(t, "GET", base+"/v1/memories/"+seed.ID, h, "")
			mustErrorBody(t, resp, body, http.StatusBadRequest, "invalid")
		}
		req, err := http.NewRequest("GET", base+"/v1/memories/"+seed.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range reader.header() {
			req.Header.Set(k, v)
		}
		req.Header.Add("X-Requester-Teams", team)
		resp, err := (&http.Client{Transport: newContract(t, true)}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("X-Requester-Teams given twice: %d, want 400", resp.StatusCode)
		}
		if n := len(deniedEvents(t, root, nina)); n != before {
			t.Errorf("malformed headers left %d namespace_denied events", n-before)
		}
	})

	t.Run("MCP", func(t *testing.T) {
		session := func(key string, header map[string]string) *mcp.ClientSession {
			c := mcp.NewClient(&mcp.Implementation{Name: "memgate-test", Version: "test"}, nil)
			s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
				HTTPClient: &http.Client{Transport: withHeaders{header: header, next: newContract(t, false)}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}
		asserting := session(matrixKeys["asserting"], teamWriter.header())
		var got struct{ ID string }
		if !callTool(t, asserting, "get_memory", map[string]any{"id": seed.ID}, &got) || got.ID != seed.ID {
			t.Fatalf("get_memory over MCP with an asserted membership: %+v", got)
		}
		var a struct {
			GroupID  string `json:"group_id"`
			Confined bool   `json:"confined"`
		}
		if !callTool(t, asserting, "add_memory", map[string]any{"agent_id": agent, "visibility": "team", "team": team,
			"content": "Written over MCP by an asserted writer."}, &a) || a.GroupID != "team-"+team || a.Confined {
			t.Fatalf("add_memory over MCP as an asserted writer: %+v", a)
		}
		var denied toolError
		if callTool(t, session(matrixKeys["asserting"], plain.header()), "get_memory", map[string]any{"id": seed.ID}, &denied) ||
			denied.Error.Code != "not_found" {
			t.Errorf("get_memory over MCP without the header: %+v, want not_found", denied)
		}
		before := len(deniedEvents(t, root, nina))
		confined := client{key: matrixKeys["confined"], requester: nina, teams: team}
		h := confined.header()
		h["Accept"] = "application/json, text/event-stream"
		resp, _ := doMalformed(t, "POST", base+"/mcp", h,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("MCP through a confined key asserting teams: %d, want 403", resp.StatusCode)
		}
		if n := len(deniedEvents(t, root, nina)); n != before+1 {
			t.Errorf("MCP refusal: %d namespace_denied events, want 1", n-before)
		}
	})
}
