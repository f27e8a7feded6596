package handlers_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

type factHit struct {
	ID        string     `json:"id"`
	GroupID   string     `json:"group_id"`
	Relation  string     `json:"relation"`
	Fact      string     `json:"fact"`
	Source    entityHit  `json:"source"`
	Target    entityHit  `json:"target"`
	ValidAt   *time.Time `json:"valid_at"`
	InvalidAt *time.Time `json:"invalid_at"`
	ExpiredAt *time.Time `json:"expired_at"`
	Episodes  []string   `json:"episodes"`
	Conflicts []string   `json:"conflicts"`
}

type entityHit struct {
	ID      string `json:"id"`
	GroupID string `json:"group_id"`
	Name    string `json:"name"`
	Type    string `json:"type"`
}

type searchResult struct {
	Facts    []factHit   `json:"facts"`
	Entities []entityHit `json:"entities"`
	Episodes []memory    `json:"episodes"`
}

// targets lists the target names of the facts, sorted: what a user reads first.
func (r searchResult) targets() string {
	var out []string
	for _, f := range r.Facts {
		out = append(out, f.Source.Name+" "+f.Relation+" "+f.Target.Name)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func (r searchResult) entity(name string) entityHit {
	for _, e := range r.Entities {
		if e.Name == name {
			return e
		}
	}
	return entityHit{}
}

// aliceWorld is the ingestion issue's scenario in one agent's private space, ingested
// by the offline pipeline: Alice worked at Acme from 2022 and left for Globex in March
// 2024.
func aliceWorld(t *testing.T) (owner, other client, agent string) {
	owner, other, agent = ownerWorld(t)
	ingest(t, "agent-"+agent+"-")
	for _, m := range []struct{ text, at string }{
		{"Alice works at Acme as an engineer.", "2022-01-10T09:00:00Z"},
		{"In March 2024 Alice left Acme and joined Globex.", "2024-03-20T09:00:00Z"},
	} {
		var a added
		owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{
			"agent_id": agent, "messages": m.text, "reference_time": m.at}, &a)
		waitStatus(t, owner, a.ID)
	}
	return owner, other, agent
}

func TestSearch_Temporal(t *testing.T) {
	t.Parallel()
	owner, _, agent := aliceWorld(t)
	search := func(extra map[string]any) searchResult {
		body := map[string]any{"agent_id": agent, "query": "Where does Alice work?"}
		for k, v := range extra {
			body[k] = v
		}
		var r searchResult
		owner.must(http.StatusOK, "POST", "/v1/memories/search", body, &r)
		return r
	}

	now := search(nil)
	if got := now.targets(); got != "Alice WORKS_AT Globex" {
		t.Errorf("default search: facts %q, want only the current one, Alice WORKS_AT Globex", got)
	}
	if len(now.Facts) == 1 && (now.Facts[0].ValidAt == nil || now.Facts[0].ValidAt.Format("2006-01") != "2024-03") {
		t.Errorf("the Globex fact is valid from %v, want March 2024", now.Facts[0].ValidAt)
	}
	then := search(map[string]any{"as_of": "2023-06-01T00:00:00Z"})
	if got := then.targets(); got != "Alice WORKS_AT Acme" {
		t.Errorf("as_of 2023: facts %q, want Alice WORKS_AT Acme", got)
	}
	for _, f := range then.Facts {
		if f.InvalidAt == nil || f.InvalidAt.Format("2006-01") != "2024-03" || f.ExpiredAt == nil {
			t.Errorf("the Acme fact: invalid_at %v, expired_at %v; want March 2024 and set", f.InvalidAt, f.ExpiredAt)
		}
	}
	if got := search(map[string]any{"as_of": "2021-01-01T00:00:00Z"}).targets(); got != "" {
		t.Errorf("as_of 2021, before either fact: %q", got)
	}
	if got := search(map[string]any{"include_expired": true}).targets(); got != "Alice WORKS_AT Acme, Alice WORKS_AT Globex" {
		t.Errorf("include_expired: %q, want both facts", got)
	}
	if got := search(map[string]any{"relations": []string{"LIVES_IN"}}).targets(); got != "" {
		t.Errorf("relations LIVES_IN: %q, want none", got)
	}
	orgs := search(map[string]any{"entity_types": []string{"Organization"}, "include": []string{"entities"}})
	if len(orgs.Facts) != 0 || len(orgs.Episodes) != 0 || orgs.entity("Alice").ID != "" || orgs.entity("Globex").ID == "" {
		t.Errorf("entity_types Organization, entities only: %+v", orgs)
	}
	if r := search(map[string]any{"created_after": time.Now().Add(time.Hour).Format(time.RFC3339)}); len(r.Facts)+len(r.Entities)+len(r.Episodes) != 0 {
		t.Errorf("created_after an hour from now: %+v", r)
	}
}

func TestSearch_FromCenter(t *testing.T) {
	t.Parallel()
	owner, other, agent := aliceWorld(t)
	var r searchResult
	owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": agent, "query": "Globex"}, &r)
	globex := r.entity("Globex")
	if globex.ID == "" {
		t.Fatalf("no Globex entity: %+v", r.Entities)
	}
	// Without query text: what lies around Globex, nearest first. Acme is two facts
	// away (Globex - Alice - Acme), so depth 1 stops at Alice.
	var near searchResult
	owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{
		"agent_id": agent, "center_entity_id": globex.ID, "max_depth": 1, "include_expired": true}, &near)
	if near.entity("Alice").ID == "" || near.entity("Acme").ID != "" || near.targets() != "Alice WORKS_AT Globex" {
		t.Errorf("depth 1 from Globex: entities %+v, facts %q", near.Entities, near.targets())
	}
	var far searchResult
	owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{
		"agent_id": agent, "center_entity_id": globex.ID, "max_depth": 2, "include_expired": true, "query": "Acme"}, &far)
	if far.entity("Acme").ID == "" || len(far.Facts) != 2 || far.Facts[0].Target.Name != "Globex" {
		t.Errorf("depth 2 from Globex: entities %+v, facts %+v; want Acme reached and the Globex fact first", far.Entities, far.Facts)
	}

	// Another requester cannot walk from an entity it cannot see: 404, as for an id
	// that never existed; nor can it see the facts by id.
	for _, c := range []struct {
		who    client
		center string
	}{{other, globex.ID}, {owner, "7b0c2d52-0000-4000-8000-000000000000"}} {
		status, body := c.who.do("POST", "/v1/memories/search", map[string]any{"agent_id": agent, "center_entity_id": c.center})
		if status != http.StatusNotFound {
			t.Errorf("%s walking from %s: %d %s, want 404", c.who.requester, c.center, status, body)
		}
	}
	for _, f := range far.Facts {
		if status, _ := other.do("GET", "/v1/facts/"+f.ID, nil); status != http.StatusNotFound {
			t.Errorf("another requester reads fact %s: %d, want 404", f.ID, status)
		}
		var got factHit
		owner.must(http.StatusOK, "GET", "/v1/facts/"+f.ID, nil, &got)
		if got.Fact != f.Fact || got.Source.ID != f.Source.ID || len(got.Episodes) == 0 {
			t.Errorf("GET fact %s = %+v, search showed %+v", f.ID, got, f)
		}
	}
	// The list of facts has every fact, current or ended, and only for who may see them.
	// (Both see the global space, where tests running beside this one store facts.)
	list := func(c client) []factHit {
		var page struct {
			Items []factHit `json:"items"`
		}
		c.must(http.StatusOK, "GET", "/v1/facts?agent_id="+agent, nil, &page)
		var agents []factHit
		for _, f := range page.Items {
			if f.GroupID != "global" {
				agents = append(agents, f)
			}
		}
		return agents
	}
	if got := (searchResult{Facts: list(owner)}).targets(); got != "Alice WORKS_AT Acme, Alice WORKS_AT Globex" {
		t.Errorf("GET /v1/facts: %q", got)
	}
	if got := list(other); len(got) != 0 {
		t.Errorf("another requester lists the agent's private facts: %+v", got)
	}
	if status, _ := other.do("GET", "/v1/entities/"+globex.ID, nil); status != http.StatusNotFound {
		t.Errorf("another requester reads entity Globex: %d, want 404", status)
	}
	var other404 searchResult
	other.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": agent, "query": "Alice Globex Acme"}, &other404)
	if len(other404.Facts)+len(other404.Entities)+len(other404.Episodes) != 0 {
		t.Errorf("another requester searching the agent's private memory found %+v", other404)
	}
}

func TestSearch_ErrInvalid(t *testing.T) {
	t.Parallel()
	owner, _, agent := ownerWorld(t)
	for name, body := range map[string]map[string]any{
		"no query and no center":     {},
		"both as_of and history":     {"query": "x", "as_of": "2024-01-01T00:00:00Z", "include_expired": true},
		"depth without a center":     {"query": "x", "max_depth": 2},
		"depth too large":            {"center_entity_id": "7b0c2d52-0000-4000-8000-000000000000", "max_depth": 4},
		"center not an id":           {"center_entity_id": "Alice"},
		"unknown kind":               {"query": "x", "include": []string{"facts", "secrets"}},
		"relation not a name":        {"query": "x", "relations": []string{"works at"}},
		"type not a name":            {"query": "x", "entity_types": []string{"Person) DETACH DELETE n //"}},
		"created range backwards":    {"query": "x", "created_after": "2024-01-02T00:00:00Z", "created_before": "2024-01-01T00:00:00Z"},
		"as_of not a time":           {"query": "x", "as_of": "last tuesday"},
		"too many relations":         {"query": "x", "relations": strings.Split(strings.Repeat("A,", 21)+"A", ",")},
		"scope not a team or global": {"query": "x", "scopes": []string{"private"}},
	} {
		body["agent_id"] = agent
		status, out := owner.sendMalformed("POST", "/v1/memories/search", body)
		if status != http.StatusBadRequest || !strings.Contains(string(out), `"code":"invalid"`) {
			t.Errorf("%s: %d %s, want 400 invalid", name, status, out)
		}
	}
}

// injection is the corpus of hostile strings: Lucene syntax and wildcards, attempts to
// name a group, quotes, backslashes and backticks, Cypher fragments and parameter
// names, query-file fragments, control characters, invalid UTF-8 and a 1 MB string.
var injection = []string{
	`*`, `?`, `group_id:*`, `group_id:agent-*`, `content:* OR name:*`, `"`, `""`, `"unclosed`,
	`\`, `\\`, `\"`, "`", "``", "`) OR 1=1 //", `' OR '1'='1`, `" OR group_id:* OR "`, `) OR (group_id:*`,
	`AND`, `OR NOT`, `&& ||`, `!`, `fuzzy~2`, `boost^10`, `[a TO z]`, `{a TO z}`, `/.*/`, `+must -not`,
	`MATCH (n) DETACH DELETE n`, `}) RETURN n //`, `$group_ids`, `{{bm25}}`, `Entity:Person`, "nul\x00byte",
	"\x00", "tab\tand\nnewline", "\xff\xfe invalid utf-8", "agent:someone-else", "team:x", "global", "system",
	"' UNION MATCH (n) RETURN n //", "\u202eright-to-left", strings.Repeat("a", 1<<20),
}

// TestSearch_Injection sends every string of the corpus in every field of a search:
// never a 5xx, nothing written, and nothing from another requester's private space.
func TestSearch_Injection(t *testing.T) {
	t.Parallel()
	owner, other, agent := aliceWorld(t)
	theirs := "their-" + agent // the agent's id holds the test's mark
	other.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": theirs}, nil)
	ingest(t, "agent-"+theirs+"-")
	var a added
	other.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{
		"agent_id": theirs, "messages": "Alice works at Acme as an engineer. Bob knows Alice."}, &a)
	waitStatus(t, other, a.ID)
	census := func() [4]int64 {
		mineN, mineR := neo4jtest.Census(t, "agent-"+agent+"-")
		theirsN, theirsR := neo4jtest.Census(t, "agent-"+theirs+"-")
		return [4]int64{mineN, mineR, theirsN, theirsR}
	}
	before := census()
	if before[1] == 0 || before[3] == 0 {
		t.Fatalf("census %v: both spaces should hold facts", before)
	}

	private := "agent-" + theirs + "-private"
	fields := []string{"query", "agent_id", "scopes", "include", "center_entity_id", "entity_types", "relations",
		"as_of", "created_after", "created_before", "edge_types", "attributes", "edge_attributes"}
	codes := map[int]int{}
	for _, field := range fields {
		for _, payload := range injection {
			body := map[string]any{"agent_id": agent, "query": "Alice Acme", field: payload}
			switch field {
			case "scopes", "include", "entity_types", "relations", "edge_types":
				body[field] = []string{payload}
			case "attributes", "edge_attributes": // as a name, and as a value
				body[field] = map[string]any{payload: payload, "tier": payload}
			}
			status, out := owner.sendMalformed("POST", "/v1/memories/search", body)
			codes[status]++
			if status >= 500 {
				t.Errorf("%s = %.40q: %d %s", field, payload, status, out)
			}
			if strings.Contains(string(out), private) {
				t.Errorf("%s = %.40q: the answer names the other requester's private space: %.300s", field, payload, out)
			}
		}
	}
	if after := census(); after != before {
		t.Errorf("the searches changed the graph: census %v before, %v after", before, after)
	}
	t.Logf("%d payloads x %d fields: answers %v", len(injection), len(fields), codes)
}

// The turns around a memory search finds rank with it: the answer said just after a
// question the query matches, then the turn just before it, though neither holds a
// word of the query; a turn of another space said between them is not the question's
// neighbour, and another requester's search finds none of the private turns.
func TestSearch_TurnsAround(t *testing.T) {
	t.Parallel()
	owner, other, agent := ownerWorld(t)
	ingest(t, "agent-"+agent+"-")
	at := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	write := func(text string, after time.Duration, visibility string) string {
		var a added
		owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": text,
			"reference_time": at.Add(after).Format(time.RFC3339), "visibility": visibility}, &a)
		waitStatus(t, owner, a.ID)
		return a.ID
	}
	before := write("Caroline: I bought new boots on Friday.", -time.Minute, "private")
	question := write("Melanie: Where did you go hiking last weekend?", 0, "private")
	answer := write("Caroline: Mount Tamalpais, and the views were great.", time.Minute, "private")
	later := write("Caroline: We should plan a trip to the coast.", 3*time.Hour, "private")
	public := write("Caroline: My sister visits in June.", 30*time.Second, "public")
	ranked := func(c client) []string {
		var r searchResult
		c.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": agent, "query": "hiking", "include": []string{"episodes"}}, &r)
		var ids []string
		for _, e := range r.Episodes {
			ids = append(ids, e.ID)
		}
		return ids
	}
	got := ranked(owner)
	if len(got) < 3 || got[0] != question || got[1] != answer || got[2] != before {
		t.Errorf("the owner's search for hiking ranked %v; want the question %s, its answer %s, the turn before %s first (later %s, public %s)",
			got, question, answer, before, later, public)
	}
	for _, id := range ranked(other) {
		if id != public {
			t.Errorf("another requester's search found %s: only the public memory %s is theirs to see", id, public)
		}
	}
}
