package handlers_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/access/accesstest"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// Host keys of the matrix: a trusted host, an admin host, a confined host (bound to
// every requester: the matrix is about spaces; TestRequesterBinding about bindings),
// a trusted host that asserts teams (X-Requester-Teams), and another organization's.
var matrixKeys = map[string]string{"trusted": "key-trusted", "admin": "key-admin", "confined": "key-confined",
	"asserting":      "key-asserting",
	"globex_trusted": "key-globex-trusted", "globex_admin": "key-globex-admin", "globex_confined": "key-globex-confined",
	"globex_asserting": "key-globex-asserting"}

func matrixKeyring() []access.KeySpec {
	return []access.KeySpec{
		{Name: "agent-host", SHA256: access.HashKey(matrixKeys["trusted"]), Trusted: true},
		{Name: "ops", SHA256: access.HashKey(matrixKeys["admin"]), Trusted: true, Admin: true},
		{Name: "plugin", SHA256: access.HashKey(matrixKeys["confined"]), Requesters: []string{"*"}},
		{Name: "team-host", SHA256: access.HashKey(matrixKeys["asserting"]), Trusted: true, AssertTeams: true},
		// Another organization's keys, where the world holds nothing.
		{Name: "globex-agent-host", SHA256: access.HashKey(matrixKeys["globex_trusted"]), Trusted: true, Org: "globex"},
		{Name: "globex-ops", SHA256: access.HashKey(matrixKeys["globex_admin"]), Trusted: true, Admin: true, Org: "globex"},
		{Name: "globex-plugin", SHA256: access.HashKey(matrixKeys["globex_confined"]), Requesters: []string{"*"}, Org: "globex"},
		{Name: "globex-team-host", SHA256: access.HashKey(matrixKeys["globex_asserting"]), Trusted: true, AssertTeams: true, Org: "globex"},
	}
}

// client speaks for one requester through one host key, asserting teams (an
// X-Requester-Teams value) when teams is set.
type client struct {
	t         *testing.T
	base, key string
	requester string
	teams     string
}

// header is what every request of c carries: its key, requester, asserted teams, and
// a JSON body's type.
func (c client) header() map[string]string {
	h := map[string]string{"Authorization": "Bearer " + c.key, "X-Requester-Id": c.requester, "Content-Type": "application/json"}
	if c.teams != "" {
		h["X-Requester-Teams"] = c.teams
	}
	return h
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
	resp, out := do(c.t, method, c.base+path, c.header(), text)
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
	// ruleKept: space column -> a memory the visibility rule kept private, rewritten and
	// moved there (versions_rule); secret is the number the rule matched in it.
	ruleKept map[string]string
	secret   string
	copies   map[string]string   // copy column -> the copy copy_update rewrites and copy_move moves
	dissolve map[string]copyTeam // team column -> the team copy_dissolve dissolves next
	teams    int                 // teams made for team operations so far
	svc      *service.Service    // the server's, for what happens between resolution and change
	hooks    *resolveHook
	listed   map[string]map[string]string // principal -> path -> group_id of what list and search showed it
	webhooks *hookSink                    // what subscribe registered and webhook_event received
	distil   distilWorld
}

// distilWorld is what compact_words, reflect_words and move_distilled read: per space
// column a distil seed (its writer's own words) and a distil plant (words that are not
// their agent's owner's), each with a word only it holds, stated as a fact the
// pipeline extracts; and the agents whose owner has written a memory of their own.
type distilWorld struct {
	start         time.Time
	seeds, tokens map[string]string
	plants        map[string]string // column -> the plant's word
	own           map[string]bool
}

// plantDistil writes the distil seeds and plants of the world (matrix.json's
// distil_plants).
func (w *world) plantDistil(start time.Time) distilWorld {
	d := distilWorld{start: start, seeds: map[string]string{}, tokens: map[string]string{}, plants: map[string]string{}, own: map[string]bool{}}
	for _, col := range w.m.Spaces {
		if col == "system" {
			continue
		}
		d.tokens[col] = fmt.Sprintf("dtok%s%s", strings.ReplaceAll(col, "_", ""), w.suffix)
		d.seeds[col] = w.seed(col, fmt.Sprintf("A distil seed of %s. D%s works at Dorg%s.", col, d.tokens[col][1:], d.tokens[col]))
	}
	for col, pl := range w.m.DistilPlants {
		d.plants[col] = fmt.Sprintf("ptok%s%s", strings.ReplaceAll(col, "_", ""), w.suffix)
		writer := w.as(w.m.World.Agents[pl.Writer], "trusted")
		if pl.Asserts != "" {
			writer = w.as(w.m.World.Agents[pl.Writer], "asserting")
			writer.teams = (accesstest.Principal{Asserts: pl.Asserts}).AssertedTeams(w.id)
		}
		_, visibility, team := w.spaceArgs(col)
		text := fmt.Sprintf("A distil plant of %s. P%s works at Porg%s.", col, d.plants[col][1:], d.plants[col])
		if pl.Rewriter != "" {
			text = "A note of " + col + "."
		}
		body := map[string]any{"agent_id": w.id(pl.Agent), "visibility": visibility, "messages": text}
		if team != "" {
			body["team"] = team
		}
		var a added
		writer.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
		if pl.Rewriter != "" {
			rewritten := fmt.Sprintf("A distil plant of %s, rewritten. P%s works at Porg%s.", col, d.plants[col][1:], d.plants[col])
			if s, out := w.as(w.m.World.Agents[pl.Rewriter], "trusted").patch(a.ID, "", map[string]any{"messages": rewritten}); s != http.StatusOK {
				w.t.Fatalf("rewriting the distil plant of %s: %d %s", col, s, out)
			}
		}
	}
	return d
}

// ownMemory has agent's owner write one memory of its own for it, once.
func (w *world) ownMemory(agent string) {
	if w.distil.own[agent] {
		return
	}
	w.distil.own[agent] = true
	w.as(w.m.World.Agents[agent], "trusted").must(http.StatusAccepted, "POST", "/v1/memories",
		map[string]any{"agent_id": w.id(agent), "visibility": "private", "messages": "An own memory of " + agent + "."}, nil)
}

// distilled says what of column's distil seed and plant text holds: leaked when the
// plant's word is there, found when the seed's is, absent when neither.
func (w *world) distilled(column, text string) string {
	if plant := w.distil.plants[column]; plant != "" && strings.Contains(text, plant) {
		return "leaked " + plant
	}
	if token := w.distil.tokens[column]; token != "" && strings.Contains(text, token) {
		return "found"
	}
	return "absent"
}

// matrixRule is the visibility rule of the matrix's server: a US social security
// number keeps a public or team write in its agent's private space.
var matrixRule = service.VisibilityRule{Name: "ssn", Pattern: regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)}

// newMatrixServer starts the server of the matrix: the matrix's host keys, its
// visibility rule, and a Directory that runs a step right after a requester is
// resolved (move_into_dissolved).
func newMatrixServer(t *testing.T) (string, *service.Service, *resolveHook) {
	var svc *service.Service
	hooks := &resolveHook{after: map[string]func(){}}
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) {
		s.Limits.VisibilityRules = []service.VisibilityRule{matrixRule}
		s.Ontology = accesstest.TypesOntology
		hooks.Directory, s.Dir, svc = s.Dir, hooks, s
	})
	return srv.URL, svc, hooks
}

// resolveHook is a Directory that runs a step once right after resolving a
// requester: what another request would do between a request's resolution and its
// change.
type resolveHook struct {
	graph.Directory
	mu    sync.Mutex
	after map[string]func() // requester -> its step
}

func (d *resolveHook) ResolvePrincipal(ctx context.Context, org graph.Org, id string, asserted ...string) (graph.PrincipalFacts, error) {
	facts, err := d.Directory.ResolvePrincipal(ctx, org, id, asserted...)
	d.mu.Lock()
	step := d.after[id]
	delete(d.after, id)
	d.mu.Unlock()
	if step != nil {
		step()
	}
	return facts, err
}

// afterResolving runs step right after requester is next resolved.
func (d *resolveHook) afterResolving(requester string, step func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.after[requester] = step
}

func (w *world) id(name string) string { return name + "-" + w.suffix }

func (w *world) as(requester, host string) client {
	return client{t: w.t, base: w.base, key: matrixKeys[host], requester: w.id(requester)}
}

func (w *world) principal(name string) client {
	return w.principalWith(name, "", "")
}

// principalWith is the client of a principal of the matrix for an operation on team,
// a team made like the world's team column: what it asserts of column it asserts of
// team.
func (w *world) principalWith(name, column, team string) client {
	p := w.m.Principals[name]
	c := w.as(p.Requester, p.Host)
	c.teams = p.AssertedTeams(func(t string) string {
		if t == column {
			return team
		}
		return w.id(t)
	})
	return c
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

func newWorld(t *testing.T) *world {
	m, err := accesstest.Load()
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	base, svc, hooks := newMatrixServer(t)
	// A number of its own, so that a test counting the stored copies of another one
	// meanwhile finds none of this world's.
	secret := fmt.Sprintf("%03d-%02d-%04d", 100+int(b[0])%900, 10+int(b[1])%90, 1000+(int(b[2])<<8|int(b[3]))%9000)
	w := &world{m: m, suffix: hex.EncodeToString(b[:]), base: base, t: t,
		seeds: map[string]string{}, tokens: map[string]string{}, groupIDs: map[string]string{},
		ruleKept: map[string]string{}, secret: secret, copies: map[string]string{}, dissolve: map[string]copyTeam{},
		svc: svc, hooks: hooks, listed: map[string]map[string]string{}}
	w.webhooks = newHookSink(t)
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
	start := time.Now().UTC()
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
	for agent, grantees := range m.World.LapsedShares {
		for _, g := range grantees {
			lapse := time.Now().Add(2 * time.Second) // ahead of the service when it arrives, on a busy machine too
			w.as(m.World.Agents[agent], "trusted").must(http.StatusNoContent, "PUT", "/v1/agents/"+w.id(agent)+"/shares/"+w.id(g),
				map[string]any{"expires_at": lapse.Format(time.RFC3339Nano)}, nil)
		}
	}
	for agent, delegates := range m.World.Delegations {
		for _, d := range delegates {
			w.as(m.World.Agents[agent], "trusted").must(http.StatusNoContent, "PUT", "/v1/agents/"+w.id(agent)+"/delegates/"+w.id(d),
				map[string]any{"role": "writer"}, nil)
		}
	}
	for agent, delegates := range m.World.LapsedDelegations {
		for _, d := range delegates {
			lapse := time.Now().Add(2 * time.Second) // ahead of the service when it arrives, on a busy machine too
			w.as(m.World.Agents[agent], "trusted").must(http.StatusNoContent, "PUT", "/v1/agents/"+w.id(agent)+"/delegates/"+w.id(d),
				map[string]any{"role": "writer", "expires_at": lapse.Format(time.RFC3339Nano)}, nil)
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
	w.distil = w.plantDistil(start)
	for _, col := range ingested {
		w.waitDone(col)
		if col != "team_x" { // the plant of team_x is another agent's, queued behind the seeds
			waitStatus(t, w.as(w.m.World.Agents[w.m.SeedAgent(col)], "trusted"), w.distil.seeds[col])
		}
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
	for _, col := range m.Spaces {
		w.ruleKept[col] = w.seeds["system"]
		if col != "system" {
			w.ruleKept[col] = w.keepByRule(col)
		}
	}
	// The cells run once the lapsing shares have lapsed: the grantee lists the agent's
	// private space until then.
	for agent, grantees := range m.World.LapsedShares {
		for _, g := range grantees {
			for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
				if s, _ := w.as(g, "trusted").do("GET", "/v1/memories?space=private&agent_id="+w.id(agent), nil); s == http.StatusNotFound {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s still lists %s's private space a minute after its share lapsed", g, agent)
				}
			}
		}
	}
	// And once the lapsing delegations have lapsed: the owner sees them marked expired (a
	// write by the former delegate would be one more 403 of a principal of the matrix).
	for agent, delegates := range m.World.LapsedDelegations {
		owner := w.as(m.World.Agents[agent], "trusted")
		for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
			var a agentDelegates
			owner.must(http.StatusOK, "GET", "/v1/agents/"+w.id(agent), nil, &a)
			if a.expired(w.id, delegates) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v still hold %s's delegation a minute after it lapsed", delegates, agent)
			}
		}
	}
	return w
}

// agentDelegates is an agent as its owner sees it: with its delegations.
type agentDelegates struct {
	Delegates []delegation `json:"delegates"`
}

type delegation struct {
	Principal string `json:"principal"`
	Role      string `json:"role"`
	Expired   bool   `json:"expired"`
}

// expired reports whether every one of principals (through id) holds a lapsed
// delegation of the agent.
func (a agentDelegates) expired(id func(string) string, principals []string) bool {
	for _, p := range principals {
		if !slices.ContainsFunc(a.Delegates, func(d delegation) bool {
			return d.Principal == id(p) && d.Expired
		}) {
			return false
		}
	}
	return true
}

// TestMatrix runs the cells of access/testdata/matrix.json the HTTP tier decides
// (accesstest.OverHTTP) through the HTTP API on a real Neo4j (accesstest.Run), then
// checks that list and search agree with get, and that every 403 left exactly one
// namespace_denied audit event.
func TestMatrix(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	forbidden := w.m.Forbidden(accesstest.Run(t, w.m, w))

	t.Run("ListAndSearchAgreeWithGet", func(t *testing.T) {
		for name, ids := range w.listed {
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
				if status, body := cl.do("GET", path, nil); status != http.StatusOK && !gone(t, path, group) {
					// Still in its space: a GET that answers it once more was a moment's miss
					// (logged with the stored node, to tell what it was); one that never does
					// disagrees with the list.
					if !answersAgain(cl, path) {
						t.Errorf("%s was shown %s by list or search, but GET answers %d: %s (stored: %v)", name, path, status, body, stored(t, path))
					} else {
						t.Logf("%s was shown %s by list or search; GET answered %d once, then 200 (stored: %v)", name, path, status, stored(t, path))
					}
				}
			}
		}
	})

	t.Run("EveryForbiddenIsAudited", func(t *testing.T) {
		total403, totalEvents := 0, 0
		for actor, n := range forbidden {
			root, requester := w.as("root", actor.AdminHost), w.id(actor.Requester)
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

// Perform runs one cell the HTTP tier decides for accesstest.Run and keeps what a list
// or search showed.
func (w *world) Perform(c accesstest.Cell) string {
	if !accesstest.OverHTTP(c) {
		return accesstest.Undecided
	}
	got, shown := w.run(c)
	if w.listed[c.Principal] == nil {
		w.listed[c.Principal] = map[string]string{}
	}
	for path, group := range shown {
		w.listed[c.Principal][path] = group
	}
	return got
}

// onList pages through GET /v1/agents or /v1/teams (with all=true for the _all
// operations) as the cell's principal, and says whether the column's agent or team
// is on it.
func (w *world) onList(cl client, c accesstest.Cell) string {
	route, all := strings.CutSuffix(strings.TrimPrefix(c.Operation, "list_"), "_all")
	want := w.id(c.Column)
	for cursor := ""; ; {
		q := url.Values{"limit": {"2"}}
		if all {
			q.Set("all", "true")
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		status, out := cl.do("GET", "/v1/"+route+"?"+q.Encode(), nil)
		if status != http.StatusOK {
			return fmt.Sprint(status)
		}
		var page struct {
			Items []struct {
				ID, Name string
			}
			NextCursor string `json:"next_cursor"`
		}
		_ = json.Unmarshal(out, &page)
		for _, item := range page.Items {
			if item.ID == want || item.Name == want {
				return "listed"
			}
		}
		if page.NextCursor == "" {
			return "absent"
		}
		cursor = page.NextCursor
	}
}

// run performs one cell and returns its outcome and the memories it was shown.
func (w *world) run(c accesstest.Cell) (string, map[string]string) {
	cl := w.principal(c.Principal)
	own := w.id(w.m.Principals[c.Principal].Agent)
	agent, visibility, team := w.spaceArgs(c.Column)
	shown := map[string]string{}
	switch c.Operation {
	case "compact_words", "reflect_words":
		w.ownMemory(w.m.Principals[c.Principal].Agent)
		since := w.distil.start.Format(time.RFC3339Nano)
		var status int
		var out []byte
		if c.Operation == "compact_words" {
			status, out = cl.do("POST", "/v1/memories/compact", map[string]any{"agent_id": own, "since": since, "max_tokens": 8192})
		} else {
			status, out = cl.do("POST", "/v1/agents/"+own+"/reflect", map[string]any{"since": since, "max_tokens": 8192})
		}
		if status != http.StatusAccepted {
			return fmt.Sprint(status), nil
		}
		return w.distilled(c.Column, string(out)), nil
	case "move_distilled":
		// A compaction of the principal's agent derived from the column's distil seed,
		// with its words, as memgate wrote one before compaction drew on own words alone.
		source := w.distil.seeds[c.Column]
		if c.Column == "system" {
			source = w.seeds["system"] // an audit event's id: no memory
		}
		var a added
		w.as(w.m.World.Agents[w.m.Principals[c.Principal].Agent], "trusted").must(http.StatusAccepted, "POST", "/v1/memories",
			map[string]any{"agent_id": own, "visibility": "private", "source_description": "compaction",
				"messages": "A compaction: " + w.distil.tokens[c.Column] + "."}, &a)
		if err := neo4jtest.Run(neo4jtest.URI(w.t), `MATCH (e:Episodic {uuid: $id}) SET e.derived_from = [$from]`,
			map[string]any{"id": a.ID, "from": source}); err != nil {
			w.t.Fatal(err)
		}
		status, out := cl.patch(a.ID, "", map[string]any{"visibility": "public"})
		var m versioned
		_ = json.Unmarshal(out, &m)
		switch {
		case status != http.StatusOK:
			return fmt.Sprint(status), nil
		case m.GroupID != "agent-"+own+"-public":
			return "moved wrongly: " + string(out), nil
		}
		return "allow", nil
	case "list_agents", "list_agents_all", "list_teams", "list_teams_all":
		return w.onList(cl, c), nil
	case "subscribe":
		return w.runSubscribe(cl, c), nil
	case "webhook_event":
		return w.runWebhookEvent(cl, c), nil
	case "delegate", "undelegate":
		return w.runDelegate(cl, c), nil
	case "set_types", "set_team_types":
		return w.runSetTypes(cl, c), nil
	case "usage":
		// The world's agent: its seeded memories are counted, whatever they cost.
		var u struct {
			AgentID  string `json:"agent_id"`
			Memories int    `json:"memories"`
		}
		status, out := cl.do("GET", "/v1/agents/"+w.id(c.Column)+"/usage", nil)
		if status != http.StatusOK {
			return fmt.Sprint(status), nil
		}
		if err := json.Unmarshal(out, &u); err != nil || u.AgentID != w.id(c.Column) || u.Memories < 1 {
			return fmt.Sprintf("allow, but answered %s", out), nil
		}
		return "allow", nil
	case "create", "create_fact":
		if agent == "" {
			agent = own
		}
		body := map[string]any{"agent_id": agent, "visibility": visibility, "messages": "created by the matrix"}
		path := "/v1/memories"
		if c.Operation == "create_fact" {
			delete(body, "messages")
			body["source"], body["relation"], body["target"] = map[string]any{"name": "Matrix"}, "NOTES", map[string]any{"name": c.Column}
			path = "/v1/facts"
		}
		if team != "" {
			body["team"] = team
		}
		// The fact's memory, without waiting for the pipeline (Prefer: respond-async);
		// a visibility the API has not is outside openapi.json on purpose.
		header := cl.header()
		header["Prefer"] = "respond-async"
		resp, out := send(w.t, visibility == "system", "POST", cl.base+path, header, mustJSON(w.t, body))
		status := resp.StatusCode
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
	case "list_entities":
		if agent == "" {
			agent = own
		}
		name := "T" + w.tokens[c.Column][1:] // the person each seed names
		status, out := cl.do("GET", "/v1/entities?"+url.Values{"agent_id": {agent}, "name_prefix": {name}}.Encode(), nil)
		if status != http.StatusOK {
			return fmt.Sprint(status), nil
		}
		var page struct {
			Items []struct {
				ID, Name string
				GroupID  string `json:"group_id"`
			}
		}
		_ = json.Unmarshal(out, &page)
		found := false
		for _, e := range page.Items {
			shown["/v1/entities/"+e.ID] = e.GroupID
			found = found || e.Name == name
		}
		return map[bool]string{true: "found", false: "absent"}[found], shown
	case "context":
		body := map[string]any{"query": "memory " + w.tokens[c.Column], "max_tokens": 32000}
		path := "/v1/agents/" + agent + "/context"
		switch {
		case team != "":
			path, body["scopes"] = "/v1/agents/"+own+"/context", []string{"team:" + team}
		case agent == "":
			path, body["scopes"] = "/v1/agents/"+own+"/context", []string{"global"}
		}
		status, out := cl.do("POST", path, body)
		if status != http.StatusOK {
			return fmt.Sprint(status), nil
		}
		var res struct {
			Context                   string
			Facts, Entities, Episodes []string
		}
		_ = json.Unmarshal(out, &res)
		// What the block drew on is read by id, as its principal, for the group_id the
		// visible-set check after the cells needs.
		for kind, ids := range map[string][]string{"memories": res.Episodes, "facts": res.Facts, "entities": res.Entities} {
			for _, id := range ids {
				var item struct {
					GroupID string `json:"group_id"`
				}
				status, out := cl.do("GET", "/v1/"+kind+"/"+id, nil)
				if status != http.StatusOK && kind == "memories" && neo4jtest.Count(w.t,
					"MATCH (e:Episodic {uuid: $id}) WHERE e.expires_at IS NULL OR e.expires_at > datetime() RETURN count(e)",
					map[string]any{"id": id}) == 0 {
					// Erased or expired since (global is shared with other tests, which erase
					// what they wrote there, and let memories there expire: the service tier's
					// world does, running beside this one).
					continue
				}
				if status != http.StatusOK {
					return fmt.Sprintf("the context drew on %s %s, which GET answers %d", kind, id, status), nil
				}
				_ = json.Unmarshal(out, &item)
				shown["/v1/"+kind+"/"+id] = item.GroupID
			}
		}
		if !slices.Contains(res.Episodes, w.seeds[c.Column]) {
			return "absent", shown
		}
		if !strings.Contains(res.Context, w.tokens[c.Column]) {
			return "found, but its words are not in the text", shown
		}
		return "found", shown
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
	case "versions_rule":
		id := w.ruleKept[c.Column]
		status, out := cl.do("GET", "/v1/memories/"+id+"/versions?limit=100", nil)
		if status != http.StatusOK {
			return fmt.Sprint(status), nil
		}
		var v struct {
			Current  versioned   `json:"current"`
			Versions []versioned `json:"versions"`
		}
		_ = json.Unmarshal(out, &v)
		switch {
		case v.Current.ID != id || v.Current.Content != rewritten(c.Column):
			return "answered wrongly: " + string(out), nil
		case c.Column != "global" && len(v.Versions) == 0:
			return "answered without its earlier versions", nil
		case strings.Contains(string(out), w.secret):
			return "matched", nil
		}
		return "allow", nil
	case "copy_dissolve":
		return w.runCopyDissolve(c), nil
	case "move_into_dissolved":
		return w.runMoveIntoDissolved(c), nil
	case "copy_update", "copy_delete", "copy_move":
		return w.runCopy(cl, c), nil
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

// gone reports whether the memory, fact or entity at path is gone from its space
// altogether (the store, asked for that space alone, does not answer it): the global
// space is shared, and a test running beside this one erases its memories there, or
// lets them expire, after this one listed them.
func gone(t *testing.T, path, group string) bool {
	t.Helper()
	id, vis, db, ctx := path[strings.LastIndex(path, "/")+1:], graph.Visible{GroupIDs: []string{group}}, neo4jtest.DB(t), context.Background()
	var err error
	switch {
	case strings.HasPrefix(path, "/v1/memories/"):
		_, err = db.GetEpisode(ctx, id, vis)
	case strings.HasPrefix(path, "/v1/facts/"):
		_, err = db.Fact(ctx, id, vis)
	default:
		_, err = db.Entity(ctx, id, vis)
	}
	return graph.ErrorCode(err) == graph.ENOTFOUND
}

// answersAgain asks for path as cl for a few seconds, and reports whether GET answers
// it at last.
func answersAgain(cl client, path string) bool {
	for deadline, wait := time.Now().Add(3*time.Second), neo4jtest.FirstPoll; time.Now().Before(deadline); wait = neo4jtest.Poll(wait) {
		if status, _ := cl.do("GET", path, nil); status == http.StatusOK {
			return true
		}
	}
	return false
}

// stored is what the store holds under the id at path, whatever its space.
func stored(t *testing.T, path string) []map[string]any {
	t.Helper()
	return neo4jtest.Rows(t, `MATCH (n:Episodic {uuid: $id}) RETURN n {.*, now: datetime()} AS stored
UNION ALL MATCH (n:Entity {uuid: $id}) RETURN n {.*, name_embedding: null} AS stored
UNION ALL MATCH ()-[r:RELATES_TO {uuid: $id}]->() RETURN r {.*, fact_embedding: null} AS stored`,
		map[string]any{"id": path[strings.LastIndex(path, "/")+1:]})
}

// rewritten is the text the memory of versions_rule in column says once its owner
// rewrote it.
func rewritten(column string) string { return "Her birthday is in May (" + column + ")." }

// keepByRule writes, as the writer of column, a memory that the visibility rule keeps
// in the writing agent's private space (written to public, or to the column's team),
// rewrites it without the number, and moves it to column's space (global: promotes
// it; private: it stays), as versions_rule says; it returns the memory's id there.
func (w *world) keepByRule(column string) string {
	w.t.Helper()
	c, own := w.writer(column)
	agent, visibility, team := w.spaceArgs(column)
	if agent == "" {
		agent = own
	}
	body := map[string]any{"agent_id": agent, "visibility": "public", "messages": "Her SSN is " + w.secret + "."}
	if team != "" {
		body["visibility"], body["team"] = "team", team
	}
	var a added
	c.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
	if a.GroupID != "agent-"+agent+"-private" {
		w.t.Fatalf("the rule did not keep the memory for %s private: it is in %s", column, a.GroupID)
	}
	c.must(http.StatusOK, "PATCH", "/v1/memories/"+a.ID, map[string]any{"messages": rewritten(column)}, nil)
	switch visibility {
	case "private":
		return a.ID
	case "global":
		var m memory
		c.must(http.StatusAccepted, "POST", "/v1/memories/"+a.ID+"/promote", map[string]any{"target": "global"}, &m)
		return m.ID
	}
	move := map[string]any{"visibility": visibility}
	if team != "" {
		move["team"] = team
	}
	var m memory
	c.must(http.StatusOK, "PATCH", "/v1/memories/"+a.ID, move, &m)
	if m.GroupID != w.groupIDs[column] {
		w.t.Fatalf("the rewritten memory moved to %s, not %s", m.GroupID, w.groupIDs[column])
	}
	return a.ID
}

// stillIn reports whether the memory id is in group and its content is its
// promoter's (no agent's own: content_agent empty) when copy is set.
func stillIn(t *testing.T, id, group string, copy bool) bool {
	t.Helper()
	return neo4jtest.Count(t, `MATCH (e:Episodic {uuid: $id}) WHERE e.group_id = $group
  AND (NOT $copy OR coalesce(e.content_agent, '') = '') RETURN count(e)`,
		map[string]any{"id": id, "group": group, "copy": copy}) == 1
}

// promoteCopy promotes the copy_source seed into the space of column (a column of
// Copies) as the owner of the column's seed writer, and returns the copy's id.
func (w *world) promoteCopy(column, group string) string {
	w.t.Helper()
	c, _ := w.writer(column)
	target := "global"
	if _, _, team := w.spaceArgs(column); team != "" {
		target = "team:" + team
	}
	var m memory
	c.must(http.StatusAccepted, "POST", "/v1/memories/"+w.seeds[w.m.CopySource]+"/promote", map[string]any{"target": target}, &m)
	if m.GroupID != group {
		w.t.Fatalf("a copy promoted to %s landed in %s", column, m.GroupID)
	}
	return m.ID
}

// runCopy performs a copy operation: copy_update rewrites the column's copy,
// copy_delete deletes a fresh copy, copy_move moves the column's copy (which the
// copy_update cells rewrote) to its agent's private space. The copy stays its
// promoter's whoever rewrites it, and a refused change leaves it as it was.
func (w *world) runCopy(cl client, c accesstest.Cell) string {
	col := c.Column
	group := "global"
	if _, _, team := w.spaceArgs(col); team != "" {
		group = "team-" + team
	}
	if c.Operation == "copy_delete" {
		id := w.promoteCopy(col, group)
		status, _ := cl.do("DELETE", "/v1/memories/"+id, nil)
		there := stillIn(w.t, id, group, true)
		switch {
		case status == http.StatusNoContent && there:
			return "deleted, but the copy is still there"
		case status != http.StatusNoContent && !there:
			return fmt.Sprintf("%d, but the copy is gone", status)
		case !stillIn(w.t, w.seeds[w.m.CopySource], w.groupIDs[w.m.CopySource], false):
			return fmt.Sprintf("%d, and the original is gone", status)
		case status == http.StatusNoContent:
			return "allow"
		}
		return fmt.Sprint(status)
	}
	id, ok := w.copies[col]
	if !ok {
		id = w.promoteCopy(col, group)
		w.copies[col] = id
	}
	var before versioned
	maker, _ := w.writer(col)
	maker.must(http.StatusOK, "GET", "/v1/memories/"+id, nil, &before)
	var status int
	var out []byte
	switch c.Operation {
	case "copy_update":
		text := "The copy of " + col + " as " + cl.requester + " rewrote it."
		status, out = cl.patch(id, "", map[string]any{"messages": text})
		var m versioned
		_ = json.Unmarshal(out, &m)
		if status == http.StatusOK && (m.Content != text || m.GroupID != group || m.Version != before.Version+1) {
			return "rewritten wrongly: " + string(out)
		}
	case "copy_move":
		status, out = cl.patch(id, "", map[string]any{"visibility": "private"})
		if status == http.StatusOK {
			return "allow, moved: " + string(out)
		}
	}
	var after versioned
	afterStatus, body := maker.do("GET", "/v1/memories/"+id, nil)
	_ = json.Unmarshal(body, &after)
	switch {
	case afterStatus != http.StatusOK || !stillIn(w.t, id, group, true):
		return fmt.Sprintf("%d, but the copy left %s or is now an agent's own", status, col)
	case status != http.StatusOK && (after.Content != before.Content || after.Version != before.Version):
		return fmt.Sprintf("%d, but the copy changed", status)
	case status == http.StatusOK:
		return "allow"
	}
	return fmt.Sprint(status)
}

// copyTeam is a team made like one of the world's for a cell that dissolves it: a
// copy of the copy_source seed its writer promoted there and rewrote to say planted,
// and a memory its writer's agent wrote there.
type copyTeam struct {
	name, copy, own, planted string
}

// makeTeam creates a team like the world's team column (its owner and members).
func (w *world) makeTeam(column string) string {
	w.teams++
	name, root := w.id(fmt.Sprintf("%s%d", column, w.teams)), w.as("root", "admin")
	root.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": name, "owner_id": w.id(w.m.World.TeamOwner(column))}, nil)
	for member, role := range w.m.World.Teams[column] {
		root.must(http.StatusNoContent, "PUT", "/v1/teams/"+name+"/members/"+w.id(member), map[string]any{"role": role}, nil)
	}
	return name
}

// teamWithCopy makes a copyTeam like the world's team column.
func (w *world) teamWithCopy(column string) copyTeam {
	ct := copyTeam{name: w.makeTeam(column)}
	writerAgent := w.m.SeedWriters["team_"+column]
	c := w.as(w.m.World.Agents[writerAgent], "trusted")
	var cp memory
	c.must(http.StatusAccepted, "POST", "/v1/memories/"+w.seeds[w.m.CopySource]+"/promote", map[string]any{"target": "team:" + ct.name}, &cp)
	ct.copy, ct.planted = cp.ID, "planted"+strings.ReplaceAll(ct.name, "-", "")
	c.must(http.StatusOK, "PATCH", "/v1/memories/"+ct.copy, map[string]any{"messages": "Written into the copy by its promoter: " + ct.planted + "."}, nil)
	var a added
	c.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.id(writerAgent), "visibility": "team", "team": ct.name,
		"messages": "A team memory of the writer's own."}, &a)
	ct.own = a.ID
	return ct
}

// runCopyDissolve dissolves (DELETE /v1/teams/{team}), as the cell's principal, a
// team made like the world's team of the column (ghost: one that does not exist),
// holding a rewritten copy and a memory of its writer's agent. Dissolved, the team
// is gone, the memory is back in its agent's private space, and the copy is erased
// with everything it said, never in the private space of the agent it was copied
// from; refused, all is as it was.
func (w *world) runCopyDissolve(c accesstest.Cell) string {
	col := c.Column
	if _, ok := w.m.World.Teams[col]; !ok {
		status, _ := w.principal(c.Principal).do("DELETE", "/v1/teams/"+w.id(col), nil)
		return fmt.Sprint(status)
	}
	ct, ok := w.dissolve[col]
	if !ok {
		ct = w.teamWithCopy(col)
		w.dissolve[col] = ct
	}
	status, out := w.principalWith(c.Principal, col, ct.name).do("DELETE", "/v1/teams/"+ct.name, nil)
	teamStatus, _ := w.as("root", "admin").do("GET", "/v1/teams/"+ct.name, nil)
	team := "team-" + ct.name
	writer := w.id(w.m.SeedWriters["team_"+col])
	source := "agent-" + w.id(w.m.SeedAgent(w.m.CopySource)) + "-private"
	if status != http.StatusOK {
		if teamStatus != http.StatusOK || !stillIn(w.t, ct.copy, team, true) || !stillIn(w.t, ct.own, team, false) {
			return fmt.Sprintf("%d, but the team or its memories are gone", status)
		}
		return fmt.Sprint(status)
	}
	delete(w.dissolve, col) // the next cell dissolves a team of its own
	var d dissolution
	_ = json.Unmarshal(out, &d)
	switch {
	case teamStatus != http.StatusNotFound:
		return fmt.Sprintf("dissolved, but the team answers %d", teamStatus)
	case d.DryRun || d.Moved != 1 || d.Erased != 1:
		return "dissolved wrongly: " + string(out)
	case !stillIn(w.t, ct.own, "agent-"+writer+"-private", false):
		return "dissolved, but the writer's own memory is not back in its private space"
	case stillIn(w.t, ct.copy, source, false) || neo4jtest.Stored(w.t, ct.planted, team) != 0:
		return "dissolved, but the copy or what it said is still stored"
	}
	return "allow"
}

// runMoveIntoDissolved moves (PATCH visibility team) a private memory of the
// principal's agent, written by the agent's owner, into a team made like the world's
// team of the column, which is dissolved right after the request's requester is
// resolved (ghost: a team that never existed). No memory or version may be left in
// the dissolved team's space; refused, the memory stays where it was.
func (w *world) runMoveIntoDissolved(c accesstest.Cell) string {
	p := w.m.Principals[c.Principal]
	agent := w.id(p.Agent)
	var a added
	w.as(w.m.World.Agents[p.Agent], "trusted").must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent,
		"visibility": "private", "messages": "A memory of " + agent + " moved into a dissolved team."}, &a)
	team := w.id(c.Column)
	dissolved := make(chan error, 1)
	_, exists := w.m.World.Teams[c.Column]
	if exists {
		team = w.makeTeam(c.Column)
	}
	cl := w.principalWith(c.Principal, c.Column, team)
	if exists {
		root, err := w.svc.Resolve(context.Background(), access.Host{Name: "ops", Trusted: true, Admin: true, Requesters: []string{"*"}}, "",
			w.id("root"), nil, "matrix-"+w.suffix)
		if err != nil {
			w.t.Fatal(err)
		}
		w.hooks.afterResolving(cl.requester, func() {
			_, err := w.svc.DissolveTeam(context.Background(), root, team, false)
			dissolved <- err
		})
	}
	status, out := cl.patch(a.ID, "", map[string]any{"visibility": "team", "team": team})
	if exists {
		select {
		case err := <-dissolved:
			if err != nil {
				w.t.Fatalf("dissolving %s after resolving %s: %v", team, cl.requester, err)
			}
		default:
			w.t.Fatalf("%s was not dissolved: the request did not resolve %s", team, cl.requester)
		}
	}
	switch left := neo4jtest.Stored(w.t, "", "team-"+team); {
	case left != 0:
		return fmt.Sprintf("%d, and %d memories or versions are in the space of the team that does not exist", status, left)
	case status == http.StatusOK:
		return "allow, moved: " + string(out)
	case !stillIn(w.t, a.ID, "agent-"+agent+"-private", false):
		return fmt.Sprintf("%d, but the memory left its private space", status)
	}
	return fmt.Sprint(status)
}

// runDelegate grants (delegate) or revokes (undelegate) a delegation, as the cell's
// principal, on a fresh agent made like the world's agent of the column (its owner
// and its delegations; undelegate: one to the grantee too), or on an agent that does
// not exist (ghost). Then the grantee's write to the agent's public space is accepted
// exactly when it holds the delegation, and the owner sees exactly that.
func (w *world) runDelegate(cl client, c accesstest.Cell) string {
	w.teams++
	agent, grantee := w.id(fmt.Sprintf("%s%d", c.Column, w.teams)), w.as("gina", "trusted")
	owner, exists := w.m.World.Agents[c.Column]
	path := "/v1/agents/" + agent + "/delegates/" + grantee.requester
	if exists {
		w.as("root", "admin").must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent, "owner_id": w.id(owner)}, nil)
		oc := w.as(owner, "trusted")
		for _, d := range w.m.World.Delegations[c.Column] {
			oc.must(http.StatusNoContent, "PUT", "/v1/agents/"+agent+"/delegates/"+w.id(d), map[string]any{"role": "writer"}, nil)
		}
		if c.Operation == "undelegate" {
			oc.must(http.StatusNoContent, "PUT", path, map[string]any{"role": "writer"}, nil)
		}
	}
	var status int
	if c.Operation == "delegate" {
		status, _ = cl.do("PUT", path, map[string]any{"role": "writer"})
	} else {
		status, _ = cl.do("DELETE", path, nil)
	}
	got := fmt.Sprint(status)
	if status == http.StatusNoContent {
		got = "allow"
	}
	if !exists {
		if s, _ := w.as("root", "admin").do("GET", "/v1/agents/"+agent, nil); s != http.StatusNotFound {
			return fmt.Sprintf("%s, and now the agent answers %d", got, s)
		}
		return got
	}
	// The grantee is no principal of the matrix: its refused write is audited apart.
	wrote, _ := grantee.do("POST", "/v1/memories", map[string]any{"agent_id": agent, "visibility": "public",
		"messages": "A delegate's memory of " + agent + "."})
	var a agentDelegates
	w.as(owner, "trusted").must(http.StatusOK, "GET", "/v1/agents/"+agent, nil, &a)
	listed := slices.ContainsFunc(a.Delegates, func(d delegation) bool {
		return d.Principal == grantee.requester && d.Role == "writer" && !d.Expired
	})
	holds := (c.Operation == "delegate") == (got == "allow")
	switch {
	case holds != (wrote == http.StatusAccepted):
		return fmt.Sprintf("%s, but the grantee's write answers %d", got, wrote)
	case holds != listed:
		return fmt.Sprintf("%s, but the owner sees the grantee's delegation: %v", got, listed)
	}
	return got
}

// runSetTypes is PUT /v1/agents/{id}/types (set_types) or /v1/teams/{team}/types
// (set_team_types), as the cell's principal, of the world's agent or team of the
// column itself, naming all of the deployment's types in an order of the cell's own
// (accesstest.NextTypes): allowed (200, answering what it set), the agent or team
// stores that order; refused, what it stored before; ghost, none is made.
func (w *world) runSetTypes(cl client, c accesstest.Cell) string {
	label, name, path := "Agent", w.id(c.Column), "/v1/agents/"+w.id(c.Column)+"/types"
	if c.Operation == "set_team_types" {
		label, path = "Team", "/v1/teams/"+w.id(c.Column)+"/types"
	}
	before, _ := neo4jtest.SpaceTypes(w.t, label, name)
	sent := accesstest.NextTypes(before)
	status, out := cl.do("PUT", path, map[string]any{"entity_types": sent.EntityTypes, "edge_types": sent.EdgeTypes})
	got := fmt.Sprint(status)
	if status == http.StatusOK {
		got = "allow"
		var answer struct {
			EntityTypes []string `json:"entity_types"`
			EdgeTypes   []string `json:"edge_types"`
		}
		if err := json.Unmarshal(out, &answer); err != nil || !slices.Equal(answer.EntityTypes, sent.EntityTypes) ||
			!slices.Equal(answer.EdgeTypes, sent.EdgeTypes) {
			return "allow, but answered " + string(out)
		}
	}
	after, found := neo4jtest.SpaceTypes(w.t, label, name)
	return accesstest.TypesOutcome(got, before, sent, after, found)
}
