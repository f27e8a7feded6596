package handlers_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/access/accesstest"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// Host keys of the matrix: a trusted host, an admin host, a confined host (bound to
// every requester: the matrix is about spaces; TestRequesterBinding about bindings).
var matrixKeys = map[string]string{"trusted": "key-trusted", "admin": "key-admin", "confined": "key-confined"}

func matrixKeyring() []access.KeySpec {
	return []access.KeySpec{
		{Name: "agent-host", SHA256: access.HashKey(matrixKeys["trusted"]), Trusted: true},
		{Name: "ops", SHA256: access.HashKey(matrixKeys["admin"]), Trusted: true, Admin: true},
		{Name: "plugin", SHA256: access.HashKey(matrixKeys["confined"]), Requesters: []string{"*"}},
	}
}

// client speaks for one requester through one host key.
type client struct {
	t         *testing.T
	base, key string
	requester string
}

func (c client) do(method, path string, body any) (int, []byte) {
	c.t.Helper()
	var text string
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		text = string(b)
	}
	resp, out := do(c.t, method, c.base+path, map[string]string{
		"Authorization": "Bearer " + c.key, "X-Requester-Id": c.requester, "Content-Type": "application/json",
	}, text)
	return resp.StatusCode, out
}

// must does a request that has to succeed with want, and decodes the answer.
func (c client) must(want int, method, path string, body any, into any) {
	c.t.Helper()
	status, out := c.do(method, path, body)
	if status != want {
		c.t.Fatalf("%s %s as %s: status %d, want %d: %s", method, path, c.requester, status, want, out)
	}
	if into != nil {
		if err := json.Unmarshal(out, into); err != nil {
			c.t.Fatalf("%s %s: %v: %s", method, path, err, out)
		}
	}
}

type added struct {
	ID       string `json:"id"`
	GroupID  string `json:"group_id"`
	Confined bool   `json:"confined"`
}

type memory struct {
	ID           string `json:"id"`
	GroupID      string `json:"group_id"`
	PromotedFrom string `json:"promoted_from"`
}

// world is the matrix world made real through the API, with ids suffixed per run.
type world struct {
	m        *accesstest.Matrix
	suffix   string
	base     string
	t        *testing.T
	seeds    map[string]string // space column -> memory id (system: an audit event id)
	tokens   map[string]string // space column -> a word only its seed holds
	groupIDs map[string]string // space column -> group_id
}

func (w *world) id(name string) string { return name + "-" + w.suffix }

func (w *world) as(requester, host string) client {
	return client{t: w.t, base: w.base, key: matrixKeys[host], requester: w.id(requester)}
}

func (w *world) principal(name string) client {
	p := w.m.Principals[name]
	return w.as(p.Requester, p.Host)
}

// spaceArgs returns the agent, the visibility and the team a column names.
func (w *world) spaceArgs(column string) (agent, visibility, team string) {
	return accesstest.SpaceArgs(column, w.id)
}

// writer returns the world member who writes seeds in column, and their agent: the
// owner of the column's seed agent.
func (w *world) writer(column string) (client, string) {
	agent := w.m.SeedAgent(column)
	return w.as(w.m.World.Agents[agent], "trusted"), w.id(agent)
}

// seed writes one memory into column and returns its id.
func (w *world) seed(column, text string) string {
	c, own := w.writer(column)
	agent, visibility, team := w.spaceArgs(column)
	if agent == "" {
		agent = own
	}
	if column == "global" {
		var a added
		c.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": own, "visibility": "public", "messages": text}, &a)
		var m memory
		c.must(http.StatusAccepted, "POST", "/v1/memories/"+a.ID+"/promote", map[string]any{"target": "global"}, &m)
		return m.ID
	}
	body := map[string]any{"agent_id": agent, "visibility": visibility, "messages": text}
	if team != "" {
		body["team"] = team
	}
	var a added
	c.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
	if a.GroupID != w.groupIDs[column] {
		w.t.Fatalf("seed in %s landed in %s", column, a.GroupID)
	}
	return a.ID
}

// ingested are the columns whose seeds become facts and entities.
var ingested = []string{"a_private", "a_public", "b_private", "b_public", "team_x", "team_y", "a_shared"}

// waitDone waits until ingestion has processed the seed of column.
func (w *world) waitDone(column string) {
	writer, _ := w.writer(column)
	waitStatus(w.t, writer, w.seeds[column])
}

func newWorld(t *testing.T, base string) *world {
	m, err := accesstest.Load()
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	w := &world{m: m, suffix: hex.EncodeToString(b[:]), base: base, t: t,
		seeds: map[string]string{}, tokens: map[string]string{}, groupIDs: map[string]string{}}
	neo4jtest.Forget(t, w.suffix) // registered first, so it runs after ingestion has stopped
	for _, col := range m.Spaces {
		agent, visibility, team := w.spaceArgs(col)
		switch {
		case visibility == "shared":
			w.groupIDs[col] = "user-" + w.id(w.m.World.Agents[w.m.SeedAgent(col)]) + "-shared"
		case agent != "":
			w.groupIDs[col] = "agent-" + agent + "-" + visibility
		case team != "":
			w.groupIDs[col] = "team-" + team
		default:
			w.groupIDs[col] = col
		}
	}

	root := w.as("root", "admin")
	for agent, owner := range m.World.Agents {
		root.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": w.id(agent), "owner_id": w.id(owner)}, nil)
	}
	for team, members := range m.World.Teams {
		root.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": w.id(team), "owner_id": w.id(m.World.TeamOwner(team))}, nil)
		for member, role := range members {
			root.must(http.StatusNoContent, "PUT", "/v1/teams/"+w.id(team)+"/members/"+w.id(member), map[string]any{"role": role}, nil)
		}
	}
	for _, p := range m.World.Promoters {
		root.must(http.StatusNoContent, "PUT", "/v1/promoters/"+w.id(p), nil, nil)
	}
	for agent, grantees := range m.World.Shares {
		for _, g := range grantees {
			w.as(m.World.Agents[agent], "trusted").must(http.StatusNoContent, "PUT", "/v1/agents/"+w.id(agent)+"/shares/"+w.id(g), nil, nil)
		}
	}
	lapse := time.Now().Add(time.Second)
	for agent, grantees := range m.World.LapsedShares {
		for _, g := range grantees {
			w.as(m.World.Agents[agent], "trusted").must(http.StatusNoContent, "PUT", "/v1/agents/"+w.id(agent)+"/shares/"+w.id(g),
				map[string]any{"expires_at": lapse.Format(time.RFC3339Nano)}, nil)
		}
	}
	// Each seed names a person (its token, capitalised) who works at an organisation:
	// ingestion turns it into two entities and a WORKS_AT fact that search must find
	// within the visible set only. The agents' and teams' spaces of this world are
	// ingested (the offline extractor; global is shared with other tests, so its seed
	// stays queued and only its episode is searched).
	ingest(t, "agent-"+w.id("a")+"-", "agent-"+w.id("b")+"-", "team-"+w.id("x"), "team-"+w.id("y"), w.groupIDs["a_shared"])
	for _, col := range m.Spaces {
		w.tokens[col] = fmt.Sprintf("tok%s%s", strings.ReplaceAll(col, "_", ""), w.suffix)
		if col == "system" {
			continue
		}
		w.seeds[col] = w.seed(col, fmt.Sprintf("A seed memory of %s. T%s works at Org%s.", col, w.tokens[col][1:], w.tokens[col]))
	}
	for _, col := range ingested {
		w.waitDone(col)
	}
	// The system space holds audit events; take the id of one to ask for.
	var audit struct {
		Events []struct{ ID string } `json:"events"`
	}
	root.must(http.StatusOK, "GET", "/v1/audit?limit=1&actor="+w.id("root"), nil, &audit)
	if len(audit.Events) != 1 {
		t.Fatal("no audit event to use as the system space's memory")
	}
	w.seeds["system"] = audit.Events[0].ID
	// The cells run once the lapsing shares have lapsed: the grantee lists the agent's
	// private space until then.
	for agent, grantees := range m.World.LapsedShares {
		for _, g := range grantees {
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
				if s, _ := w.as(g, "trusted").do("GET", "/v1/memories?space=private&agent_id="+w.id(agent), nil); s == http.StatusNotFound {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s still lists %s's private space a minute after its share lapsed", g, agent)
				}
			}
		}
	}
	return w
}

// httpOperations are the operations of the matrix TestMatrix runs over HTTP, in this
// order; service/matrix_test.go runs every operation through the service layer, so
// this test's part is what HTTP adds: routes, status codes, request and answer shapes.
var httpOperations = []string{"create", "get", "list", "search", "delete", "promote", "promote_team", "update", "move",
	"resolve_conflict", "dissolve"}

// TestMatrix runs the cells of access/testdata/matrix.json of httpOperations through
// the HTTP API on a real Neo4j, then checks that list and search agree with get, and
// that every 403 left exactly one namespace_denied audit event.
func TestMatrix(t *testing.T) {
	srv := newServer(t, matrixKeyring())
	w := newWorld(t, srv.URL)
	all, err := w.m.Cells()
	if err != nil {
		t.Fatal(err)
	}
	var cells []accesstest.Cell
	for _, c := range all {
		if slices.Contains(httpOperations, c.Operation) {
			cells = append(cells, c)
		}
	}
	sort.SliceStable(cells, func(i, j int) bool { // creates first, deletes before promotions, as listed
		return opOrder(cells[i].Operation) < opOrder(cells[j].Operation)
	})

	forbidden := map[string]int{} // requester -> 403s seen
	listed := map[string]map[string]string{}
	for _, c := range cells {
		got, ids := w.run(c)
		if got == "403" {
			forbidden[w.principal(c.Principal).requester]++
		}
		if got != c.Want {
			t.Errorf("%s %s %s (seed %s in %s) = %s, want %s", c.Principal, c.Operation, c.Column,
				w.seeds[c.Column], w.groupIDs[c.Column], got, c.Want)
		}
		if listed[c.Principal] == nil {
			listed[c.Principal] = map[string]string{}
		}
		for id, group := range ids {
			listed[c.Principal][id] = group
		}
	}

	t.Run("ListAndSearchAgreeWithGet", func(t *testing.T) {
		for name, ids := range listed {
			cl := w.principal(name)
			readable := map[string]bool{}
			for i, col := range w.m.Spaces {
				if strings.Fields(w.m.Expect[name]["get"])[i] == "allow" {
					readable[w.groupIDs[col]] = true
				}
			}
			// Beyond the matrix columns: the principal's own agent, and every public space.
			own := w.id(w.m.Principals[name].Agent)
			if w.m.World.Agents[w.m.Principals[name].Agent] == w.m.Principals[name].Requester {
				readable["agent-"+own+"-private"], readable["agent-"+own+"-public"] = true, true
			}
			for path, group := range ids {
				if !readable[group] && !(strings.HasPrefix(group, "agent-") && strings.HasSuffix(group, "-public")) {
					t.Errorf("%s was shown %s in %s, outside its visible set", name, path, group)
				}
				if status, body := cl.do("GET", path, nil); status != http.StatusOK && !erased(t, path, group) {
					t.Errorf("%s was shown %s by list or search, but GET answers %d: %s", name, path, status, body)
				}
			}
		}
	})

	t.Run("EveryForbiddenIsAudited", func(t *testing.T) {
		root := w.as("root", "admin")
		total403, totalEvents := 0, 0
		for requester, n := range forbidden {
			events := 0
			cursor := ""
			for {
				var page struct {
					Events     []json.RawMessage `json:"events"`
					NextCursor string            `json:"next_cursor"`
				}
				q := url.Values{"kind": {"namespace_denied"}, "actor": {requester}, "limit": {"100"}, "cursor": {cursor}}
				root.must(http.StatusOK, "GET", "/v1/audit?"+q.Encode(), nil, &page)
				events += len(page.Events)
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			if events != n {
				t.Errorf("%s: %d responses were 403, %d namespace_denied events", requester, n, events)
			}
			total403 += n
			totalEvents += events
		}
		t.Logf("403 responses: %d, namespace_denied events: %d", total403, totalEvents)
	})
}

func opOrder(op string) int {
	if i := slices.Index(httpOperations, op); i >= 0 {
		return i
	}
	return len(httpOperations)
}

// run performs one cell and returns its outcome and the memories it was shown.
func (w *world) run(c accesstest.Cell) (string, map[string]string) {
	cl := w.principal(c.Principal)
	own := w.id(w.m.Principals[c.Principal].Agent)
	agent, visibility, team := w.spaceArgs(c.Column)
	shown := map[string]string{}
	switch c.Operation {
	case "create":
		if agent == "" {
			agent = own
		}
		body := map[string]any{"agent_id": agent, "visibility": visibility, "messages": "created by the matrix"}
		if team != "" {
			body["team"] = team
		}
		send := cl.do
		if visibility == "system" { // not a visibility the API has: outside openapi.json on purpose
			send = cl.sendMalformed
		}
		status, out := send("POST", "/v1/memories", body)
		var a added
		_ = json.Unmarshal(out, &a)
		switch {
		case status != http.StatusAccepted:
			return fmt.Sprint(status), nil
		case a.Confined && a.GroupID == "agent-"+agent+"-private":
			return "confine", nil
		case !a.Confined && a.GroupID == w.groupIDs[c.Column]:
			return "allow", nil
		}
		return "landed in " + a.GroupID, nil
	case "get":
		status, out := cl.do("GET", "/v1/memories/"+w.seeds[c.Column], nil)
		var m memory
		_ = json.Unmarshal(out, &m)
		if status == http.StatusOK && m.ID == w.seeds[c.Column] {
			return "allow", nil
		}
		return fmt.Sprint(status), nil
	case "list":
		q := url.Values{"limit": {"100"}}
		switch {
		case agent != "":
			q.Set("agent_id", agent)
			q.Set("space", visibility)
		case team != "":
			q.Set("space", "team:"+team)
		default:
			q.Set("space", c.Column)
		}
		status, out := cl.do("GET", "/v1/memories?"+q.Encode(), nil)
		if status != http.StatusOK {
			return fmt.Sprint(status), nil
		}
		var page struct{ Items []memory }
		_ = json.Unmarshal(out, &page)
		found := false
		for _, m := range page.Items {
			shown["/v1/memories/"+m.ID] = m.GroupID
			found = found || m.ID == w.seeds[c.Column]
		}
		return map[bool]string{true: "allow", false: "absent"}[found], shown
	case "search":
		body := map[string]any{"query": "memory " + w.tokens[c.Column], "agent_id": agent, "limit": 100}
		switch {
		case team != "":
			body["agent_id"], body["scopes"] = own, []string{"team:" + team}
		case agent == "":
			body["agent_id"], body["scopes"] = own, []string{"global"}
		}
		status, out := cl.do("POST", "/v1/memories/search", body)
		if status != http.StatusOK {
			return fmt.Sprint(status), nil
		}
		var res struct{ Facts, Entities, Episodes []memory }
		_ = json.Unmarshal(out, &res)
		found, fact := false, false
		for _, m := range res.Episodes {
			shown["/v1/memories/"+m.ID] = m.GroupID
			found = found || m.ID == w.seeds[c.Column]
		}
		for _, f := range res.Facts {
			shown["/v1/facts/"+f.ID] = f.GroupID
			fact = fact || f.GroupID == w.groupIDs[c.Column]
		}
		for _, e := range res.Entities {
			shown["/v1/entities/"+e.ID] = e.GroupID
		}
		if found && !fact && slices.Contains(ingested, c.Column) {
			return "found without its fact", shown
		}
		if !found && fact {
			return "a fact found without its episode", shown
		}
		return map[bool]string{true: "found", false: "absent"}[found], shown
	case "delete":
		id := w.seeds["system"]
		if c.Column != "system" {
			id = w.seed(c.Column, "to be deleted")
		}
		status, body := cl.do("DELETE", "/v1/memories/"+id, nil)
		if status != http.StatusNoContent {
			return fmt.Sprint(status), nil
		}
		writer, _ := w.writer(c.Column)
		if c.Column == "global" {
			writer = cl
		}
		if status, _ := writer.do("GET", "/v1/memories/"+id, nil); status != http.StatusNotFound {
			return fmt.Sprintf("deleted, but GET answers %d: %s", status, body), nil
		}
		return "allow", nil
	case "update":
		status, out := cl.patch(w.seeds[c.Column], "", map[string]any{"tags": []string{"matrix", cl.requester}})
		var m versioned
		_ = json.Unmarshal(out, &m)
		switch {
		case status != http.StatusOK:
			return fmt.Sprint(status), nil
		case m.ID != w.seeds[c.Column] || m.Version < 2 || len(m.Tags) != 2 || m.Tags[1] != cl.requester:
			return "updated wrongly: " + string(out), nil
		}
		return "allow", nil
	case "move":
		id, to := w.seeds["system"], "private"
		if c.Column != "system" {
			id = w.seed(c.Column, "to be moved")
		}
		if visibility == "private" {
			to = "public"
		}
		status, out := cl.patch(id, "", map[string]any{"visibility": to})
		var m versioned
		_ = json.Unmarshal(out, &m)
		switch {
		case status != http.StatusOK:
			return fmt.Sprint(status), nil
		case m.GroupID != "agent-"+w.id(w.m.SeedAgent(c.Column))+"-"+to || m.Status != "queued":
			return "moved wrongly: " + string(out), nil
		}
		return "allow", nil
	case "resolve_conflict":
		id := w.seeds["system"]
		if c.Column != "system" {
			id = neo4jtest.SeedConflict(w.t, w.groupIDs[c.Column], "Matrix")
		}
		status, out := cl.do("POST", "/v1/conflicts/"+id+"/resolve", map[string]any{"keep": "both"})
		var got conflict
		_ = json.Unmarshal(out, &got)
		switch {
		case status != http.StatusOK:
			return fmt.Sprint(status), nil
		case got.ID != id || got.Keep != "both" || got.Status != "resolved":
			return "resolved wrongly: " + string(out), nil
		}
		return "allow", nil
	case "dissolve":
		status, out := cl.do("DELETE", "/v1/teams/"+w.id(c.Column)+"?dry_run=true", nil)
		var d dissolution
		_ = json.Unmarshal(out, &d)
		switch {
		case status != http.StatusOK:
			return fmt.Sprint(status), nil
		case !d.DryRun || d.Moved == 0:
			return "dissolved wrongly: " + string(out), nil
		}
		return "allow", nil
	case "promote", "promote_team":
		target, group := "global", "global"
		if c.Operation == "promote_team" {
			target, group = "team:"+w.id(w.m.PromoteToTeam), "team-"+w.id(w.m.PromoteToTeam)
		}
		status, out := cl.do("POST", "/v1/memories/"+w.seeds[c.Column]+"/promote", map[string]any{"target": target})
		var m memory
		_ = json.Unmarshal(out, &m)
		switch {
		case status != http.StatusAccepted:
			return fmt.Sprint(status), nil
		case m.GroupID == group && m.PromotedFrom == w.seeds[c.Column]:
			return "allow", nil
		}
		return "promoted wrongly: " + string(out), nil
	}
	return "unknown operation", nil
}

// erased reports whether the memory at path is gone from its space altogether: the
// global space is shared, and a test running beside this one erases its memories
// there when it ends, after this one listed them.
func erased(t *testing.T, path, group string) bool {
	t.Helper()
	id := path[strings.LastIndex(path, "/")+1:]
	_, err := neo4jtest.DB(t).GetEpisode(context.Background(), id, graph.Visible{GroupIDs: []string{group}})
	return graph.ErrorCode(err) == graph.ENOTFOUND
}
