package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// TestProbe_NoLeaks is the red team's sweep, black-box over HTTP and MCP: nine
// principals (trusted keys, an admin key, a confined key bound to app1-*, an end user
// with a JWT), each with an agent whose private and public memories carry words of
// their own, a team, a share; and five principals of a second organization (globex)
// with the same requester ids, the same agent ids and a team of the same name, whose
// memories carry words of theirs. Every principal (under make test, one of each kind:
// probeSkips) then asks every id route for every id (memories, facts, entities,
// agents, the team), lists and searches every agent, over REST and MCP, tries what it
// may not change, and a forged requester is tried through each kind of credential. Expected: no planted word in any answer to a principal who
// may not read its space; nothing invisible answers anything but 404; no 500; and the
// 403s, per requester, are exactly the denial events of the audit log. Three more
// public memories, each naming an entity another public memory keeps, are withdrawn
// before the sweep (deleted, expired and swept, moved to private): their words must
// then reach no one who may not read where they went, entity summaries included.
// Every principal compacts and reflects on its own agent before the sweep: nothing
// another space holds reaches what they write. After it, alice's search scores and
// ranks the same once the other organization wrote her words many times.
func TestProbe_NoLeaks(t *testing.T) {
	t.Parallel()
	base, idpKey, suffix, root, svc := bindingService(t)
	id := func(name string) string { return name + "-" + suffix }
	start := time.Now().UTC()

	// The principals, each through its credential. globex- names are the second
	// organization's: the same requester id as the name after the prefix.
	type principal struct {
		c                     client
		requester, agent, org string
	}
	key := map[string]string{"trusted": matrixKeys["trusted"], "app1": "key-app1"}
	names := []string{"alice", "bob", "carol", "dave", "mallory", "app1-frank", "app1-gina", "jwt-hank", "root",
		"globex-alice", "globex-bob", "globex-carol", "globex-dave", "globex-root"}
	ps := map[string]*principal{}
	exists := map[string]bool{} // org + "/" + agent id
	for _, n := range names {
		name, org := n, ""
		if rest, ok := strings.CutPrefix(n, "globex-"); ok {
			name, org = rest, "globex"
		}
		c := client{t: t, base: base, key: key["trusted"], requester: id(name)}
		switch {
		case n == "root":
			c = root
		case n == "globex-root":
			c.key = "key-globex-admin"
		case org == "globex":
			c.key = "key-globex"
		case strings.HasPrefix(n, "app1-"):
			c.key = key["app1"]
		case strings.HasPrefix(n, "jwt-"):
			c = client{t: t, base: base, key: idpKey.Token(t, id(n))} // no X-Requester-Id
		}
		ps[n] = &principal{c: c, requester: id(name), agent: id(name + "-ag"), org: org}
		exists[org+"/"+ps[n].agent] = true
	}
	// prefix is the start of the group_ids of an organization's spaces.
	prefix := func(org string) string {
		if org == "" {
			return ""
		}
		return "org-" + org + "_"
	}
	member := func(p string) bool { return strings.HasSuffix(p, "carol") || strings.HasSuffix(p, "dave") } // of its own organization's team
	admin := func(p string) bool { return strings.HasSuffix(p, "root") }
	// The same team name in both organizations: carol writes, dave reads.
	team := id("probe-team")
	for _, org := range []string{"", "globex"} {
		admin := ps[strings.TrimPrefix(org+"-root", "-")].c
		admin.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
		admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+id("carol"), map[string]any{"role": "writer"}, nil)
		admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+id("dave"), map[string]any{"role": "reader"}, nil)
	}

	// The world: per agent a private and a public memory, each with a word found
	// nowhere else (capitalised, so extraction makes entities and facts of it); carol's
	// team memory; alice's private space shared with bob.
	var seeds []*seed
	var scopes []string
	n := 0
	word := func() string { n++; return fmt.Sprintf("Zq%s%02d", suffix, n) }
	var bobsEmployer string // the entity of bob's public memory the withdrawn ones name
	for _, name := range names {
		p := ps[name]
		p.c.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": p.agent}, nil)
		scopes = append(scopes, prefix(p.org)+"agent-"+p.agent+"-")
		for _, visibility := range []string{"private", "public"} {
			s := &seed{word: word(), space: visibility, agent: p.agent, owner: name, org: p.org}
			if visibility == "private" {
				s.readers = map[string]bool{name: true}
			}
			employer := word()
			if name == "bob" && visibility == "public" {
				bobsEmployer = employer
			}
			var a added
			p.c.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": p.agent, "visibility": visibility,
				"messages": s.word + " works at " + employer + "."}, &a)
			s.memory = a.ID
			seeds = append(seeds, s)
		}
	}
	// bob's public memories to be withdrawn once extracted: each word becomes a fact
	// and a line of the summary of bob's employer, which his lasting memory keeps.
	withdrawn := map[string]*seed{}
	for _, how := range []string{"deleted", "expired", "moved"} {
		s := &seed{word: word(), space: "public", agent: ps["bob"].agent, owner: "bob"}
		var a added
		ps["bob"].c.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": s.agent, "visibility": "public",
			"messages": s.word + " works at " + bobsEmployer + "."}, &a)
		s.memory = a.ID
		withdrawn[how] = s
	}
	var a added
	for _, org := range []string{"", "globex"} {
		carol, dave := strings.TrimPrefix(org+"-carol", "-"), strings.TrimPrefix(org+"-dave", "-")
		teamSeed := &seed{word: word(), space: "team", agent: ps[carol].agent, owner: carol, org: org,
			readers: map[string]bool{carol: true, dave: true}}
		ps[carol].c.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": ps[carol].agent,
			"visibility": "team", "team": team, "messages": teamSeed.word + " lives in " + word() + "."}, &a)
		teamSeed.memory = a.ID
		seeds = append(seeds, teamSeed)
	}
	// Webhooks: every principal follows, content included, its own agent, alice's
	// (whose private space bob is about to be shared) and bob's (whose memories are
	// withdrawn) of its organization, and the team where it is a member; globex's
	// admin its audit events. What each receives is checked after the sweep
	// (probeHooks.check).
	hooks := &probeHooks{sink: newHookSink(t), suffix: suffix}
	for _, who := range names {
		agents := []string{ps[who].agent}
		for _, other := range []string{"alice", "bob", "globex-alice", "globex-bob"} {
			if ps[other].org == ps[who].org && ps[other].agent != ps[who].agent {
				agents = append(agents, ps[other].agent)
			}
		}
		// Only the second organization's admin follows the audit events: the first's
		// would be sent every refusal of every test running beside this one.
		hooks.subscribe(ps[who].c, who, agents, member(who), team, who == "globex-root")
	}
	hooks.deliver(t, svc)
	ps["alice"].c.must(http.StatusNoContent, "PUT", "/v1/agents/"+ps["alice"].agent+"/shares/"+id("bob"), nil, nil)
	seeds[0].readers["bob"] = true // alice's private seed
	// alice's shared space: hers alone, whoever else reads her agent's private one.
	sharedSeed := &seed{word: word(), space: "shared", agent: ps["alice"].agent, owner: "alice", readers: map[string]bool{"alice": true}}
	ps["alice"].c.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": ps["alice"].agent,
		"visibility": "shared", "messages": sharedSeed.word + " works at " + word() + "."}, &a)
	sharedSeed.memory = a.ID
	seeds = append(seeds, sharedSeed)
	// An earlier version of alice's private seed holds a word of its own (no facts).
	version := &seed{word: word(), space: "private", agent: seeds[0].agent, owner: "alice", memory: seeds[0].memory, readers: seeds[0].readers}
	ps["alice"].c.must(http.StatusOK, "PATCH", "/v1/memories/"+version.memory, map[string]any{"tags": []string{version.word}}, nil)
	ps["alice"].c.must(http.StatusOK, "PATCH", "/v1/memories/"+version.memory, map[string]any{"tags": []string{"current"}}, nil)
	seeds = append(seeds, version)
	ingest(t, append(scopes, "team-"+team, "org-globex_team-"+team, "user-"+id("alice")+"-shared")...)

	// Every memory done, then the ids of the facts and entities each space holds, read
	// by a reader of it.
	facts, entities := map[string]*seed{}, map[string]*seed{}
	for _, s := range seeds {
		reader := ps[s.owner].c
		for r := range s.readers {
			reader = ps[r].c
		}
		waitStatus(t, reader, s.memory)
		var found struct {
			Facts []struct {
				ID             string
				Fact           string
				Source, Target struct{ ID, Name string }
			}
		}
		body := map[string]any{"agent_id": s.agent, "query": s.word, "include": []string{"facts"}}
		if s.space == "team" {
			body["scopes"] = []string{"team:" + team}
		}
		reader.must(http.StatusOK, "POST", "/v1/memories/search", body, &found)
		for _, f := range found.Facts {
			if strings.Contains(f.Fact, s.word) {
				facts[f.ID], entities[f.Source.ID], entities[f.Target.ID] = s, s, s
			}
		}
	}
	if len(facts) < len(seeds)-3 { // the version seed states none
		t.Fatalf("%d facts found for %d seeds: extraction did not give the sweep its ids", len(facts), len(seeds))
	}
	withdraw(t, ps["bob"].c, withdrawn, bobsEmployer)
	// A conflict held for review in each seed's space, its facts naming the seed's word.
	conflicts := map[string]*seed{}
	for _, s := range seeds[:len(seeds)-1] { // the version seed shares alice's private space
		group := prefix(s.org) + "agent-" + s.agent + "-" + s.space
		switch s.space {
		case "team":
			group = prefix(s.org) + "team-" + team
		case "shared":
			group = "user-" + id("alice") + "-shared"
		}
		conflicts[neo4jtest.SeedConflict(t, group, s.word)] = s
	}
	// The withdrawn words from now on: the deleted and expired ones for no one, the
	// moved one for bob, who reads his private space.
	withdrawn["deleted"].readers, withdrawn["expired"].readers = map[string]bool{}, map[string]bool{}
	withdrawn["moved"].readers, withdrawn["moved"].space = map[string]bool{"bob": true}, "private"
	seeds = append(seeds, withdrawn["deleted"], withdrawn["expired"], withdrawn["moved"])
	// Nothing of one organization is another's to read: public is public within one.
	mayRead := func(p string, s *seed) bool { return ps[p].org == s.org && (s.readers == nil || s.readers[p]) }
	sees := func(p, agent string) bool { return exists[ps[p].org+"/"+agent] } // an agent of its organization

	// Every principal compacts (REST) and reflects on (MCP) its own agent: what they
	// write holds its own words alone, of its agent's private and public spaces; never
	// a team's, a shared space's, another agent's or another organization's. What they
	// wrote stays in its private space, which the sweep reads too.
	type distilled struct {
		ID          string
		DerivedFrom []string `json:"derived_from"`
	}
	derived := map[string][]string{} // memory -> the memories it was derived from
	for _, who := range names {
		c, agent := ps[who].c, ps[who].agent
		var comp struct {
			distilled
			Content string
		}
		c.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": agent,
			"since": start.Format(time.RFC3339Nano), "max_tokens": 4000}, &comp)
		derived[comp.ID] = comp.DerivedFrom
		var refl json.RawMessage
		if !callTool(t, mcpSession(t, base, c.key, c.requester), "reflect", map[string]any{"agent_id": agent,
			"since": start.Format(time.RFC3339Nano), "max_tokens": 4000}, &refl) {
			t.Fatalf("%s's reflection over MCP: %s", who, refl)
		}
		var reflected struct{ Memories []distilled }
		_ = json.Unmarshal(refl, &reflected)
		for _, m := range reflected.Memories {
			derived[m.ID] = m.DerivedFrom
		}
		for _, s := range seeds {
			own := s.owner == who && s.org == ps[who].org && (s.space == "private" || s.space == "public")
			for what, text := range map[string]string{"compaction": comp.Content, "reflection": string(refl)} {
				if strings.Contains(text, s.word) && !own {
					t.Errorf("LEAK: %s's %s holds %s's %s word %s", who, what, s.owner, s.space, s.word)
				}
			}
		}
	}

	// The sweep. Each answer is scanned for the words its reader may not see.
	forbidden := map[string]int{} // 403s per requester named
	requests, notFound := 0, 0
	var counting sync.Mutex
	check := func(who, what string, status int, body []byte, visible bool, want403 bool) {
		t.Helper()
		counting.Lock()
		defer counting.Unlock()
		requests++
		for _, s := range seeds {
			if !mayRead(who, s) && strings.Contains(string(body), s.word) {
				t.Errorf("LEAK: %s read %s's word %s through %s: %s", who, s.space, s.word, what, body)
			}
		}
		switch {
		case status >= 500:
			t.Errorf("%s %s: %d %s", who, what, status, body)
		case status == http.StatusForbidden:
			forbidden[who]++
			if visible && !want403 || !visible {
				t.Errorf("%s %s: 403 where %s was expected", who, what, map[bool]string{true: "success", false: "404"}[visible])
			}
		case status == http.StatusNotFound:
			notFound++
			if visible {
				t.Errorf("%s %s: 404 for what it may read", who, what)
			}
		case !visible:
			t.Errorf("%s %s: %d for what it may not see: %s", who, what, status, body)
		case want403:
			t.Errorf("%s %s: %d, want 403", who, what, status)
		}
	}
	// Each principal sweeps on its own goroutine, four at a time: the requests are
	// independent (every change tried is refused), and a sweep waits on round trips.
	// make test leaves out the principals of probeSkips.
	var wg sync.WaitGroup
	lanes := make(chan struct{}, 4)
	for _, who := range names {
		if probeSkips[who] {
			continue
		}
		wg.Add(1)
		lanes <- struct{}{}
		go func() {
			defer func() { <-lanes; wg.Done() }()
			c := ps[who].c
			for _, s := range seeds {
				visible := mayRead(who, s)
				status, body := c.do("GET", "/v1/memories/"+s.memory, nil)
				check(who, "GET memory "+s.word, status, body, visible, false)
				status, body = c.do("GET", "/v1/memories/"+s.memory+"/versions", nil)
				check(who, "GET versions "+s.word, status, body, visible, false)
				if s.owner != who { // what it may not change: 403 if it sees it, else 404
					status, body = c.patch(s.memory, "", map[string]any{"tags": []string{"probed"}})
					check(who, "PATCH memory "+s.word, status, body, visible, true)
					status, body = c.patch(s.memory, "", map[string]any{"visibility": "public"})
					check(who, "move memory "+s.word, status, body, visible, true)
					status, body = c.do("DELETE", "/v1/memories/"+s.memory, nil)
					check(who, "DELETE memory "+s.word, status, body, visible, true)
					status, body = c.do("POST", "/v1/memories/"+s.memory+"/retry", nil)
					check(who, "retry memory "+s.word, status, body, visible, true)
					if s.space != "public" { // a public memory anyone may promote where it writes
						status, body = c.do("POST", "/v1/memories/"+s.memory+"/promote", map[string]any{"target": "team:" + team})
						check(who, "promote memory "+s.word, status, body, visible, true)
					}
				}
			}
			for f, s := range facts {
				status, body := c.do("GET", "/v1/facts/"+f, nil)
				check(who, "GET fact of "+s.word, status, body, mayRead(who, s), false)
			}
			for e, s := range entities {
				status, body := c.do("GET", "/v1/entities/"+e, nil)
				check(who, "GET entity of "+s.word, status, body, mayRead(who, s), false)
			}
			for cf, s := range conflicts {
				if s.owner != who { // what it may not resolve: 403 if it sees it, else 404
					status, body := c.do("POST", "/v1/conflicts/"+cf+"/resolve", map[string]any{"keep": "new"})
					check(who, "resolve conflict of "+s.word, status, body, mayRead(who, s), true)
				}
			}
			for _, other := range names {
				agent := ps[other].agent
				for _, path := range []string{"/v1/agents/" + agent, "/v1/memories?agent_id=" + agent, "/v1/facts?agent_id=" + agent,
					"/v1/conflicts?agent_id=" + agent} {
					status, body := c.do("GET", path, nil)
					check(who, "GET "+path, status, body, sees(who, agent), false)
				}
				var words []string
				for _, s := range seeds {
					words = append(words, s.word)
				}
				search := map[string]any{"agent_id": agent, "query": strings.Join(words, " "), "scopes": []string{"team:" + team, "global"}}
				// A 503 (retry later) is sent again, as a client would (send).
				status, body := c.do("POST", "/v1/memories/search", search)
				check(who, "search "+agent, status, body, member(who) && sees(who, agent), false) // a team scope it cannot read: 404
				if agent != ps[who].agent {                                                       // not its own agent (the same id in the other organization is)
					if !admin(who) { // an admin host may transfer: the world would change
						status, body = c.do("PUT", "/v1/agents/"+agent+"/owner", map[string]any{"owner_id": ps[who].requester})
						check(who, "transfer "+agent, status, body, sees(who, agent), true)
					}
					status, body = c.do("PUT", "/v1/agents/"+agent+"/shares/"+id("mallory"), nil)
					check(who, "share "+agent, status, body, sees(who, agent), true)
				}
			}
			status, body := c.do("GET", "/v1/teams/"+team, nil)
			check(who, "GET team", status, body, member(who) || admin(who), false)
			status, body = c.do("DELETE", "/v1/teams/"+team+"?dry_run=true", nil)
			check(who, "dissolve team (dry run)", status, body, member(who) || admin(who), member(who)) // root owns it

			// MCP: the same reads, and the refused delete.
			session := mcpSession(t, base, c.key, c.requester)
			for _, s := range seeds {
				var out json.RawMessage
				ok := callTool(t, session, "get_memory", map[string]any{"id": s.memory}, &out)
				check(who, "MCP get_memory "+s.word, toolStatus(ok, out), out, mayRead(who, s), false)
				ok = callTool(t, session, "get_status", map[string]any{"id": s.memory}, &out)
				check(who, "MCP get_status "+s.word, toolStatus(ok, out), out, mayRead(who, s), false)
				if s.owner != who {
					ok = callTool(t, session, "delete_memory", map[string]any{"id": s.memory}, &out)
					check(who, "MCP delete_memory "+s.word, toolStatus(ok, out), out, mayRead(who, s), true)
					ok = callTool(t, session, "update_memory", map[string]any{"id": s.memory, "content": "probed"}, &out)
					check(who, "MCP update_memory "+s.word, toolStatus(ok, out), out, mayRead(who, s), true)
				}
			}
			for cf, s := range conflicts {
				if s.owner != who {
					var out json.RawMessage
					ok := callTool(t, session, "resolve_conflict", map[string]any{"id": cf, "keep": "old"}, &out)
					check(who, "MCP resolve_conflict of "+s.word, toolStatus(ok, out), out, mayRead(who, s), true)
				}
			}
			for _, other := range names {
				var out json.RawMessage
				ok := callTool(t, session, "list_memories", map[string]any{"agent_id": ps[other].agent}, &out)
				check(who, "MCP list_memories "+other, toolStatus(ok, out), out, sees(who, ps[other].agent), false)
				ok = callTool(t, session, "list_conflicts", map[string]any{"agent_id": ps[other].agent}, &out)
				check(who, "MCP list_conflicts "+other, toolStatus(ok, out), out, sees(who, ps[other].agent), false)
				ok = callTool(t, session, "search_memory", map[string]any{"agent_id": ps[other].agent, "query": "works at lives in",
					"scopes": []string{"team:" + team}}, &out)
				check(who, "MCP search_memory "+other, toolStatus(ok, out), out, member(who) && sees(who, ps[other].agent), false)
			}
		}()
	}
	wg.Wait()

	// Forged requesters: the bound key naming alice, the unbound key naming anyone,
	// the JWT naming bob. Every request refused before it reads anything.
	forged := []client{
		{t: t, base: base, key: key["app1"], requester: id("alice")},
		{t: t, base: base, key: "key-unbound", requester: id("app1-frank")},
		{t: t, base: base, key: idpKey.Token(t, id("jwt-hank")), requester: id("bob")},
	}
	named := map[string]string{id("alice"): "alice", id("app1-frank"): "app1-frank", id("bob"): "bob"}
	for _, c := range forged {
		who := named[c.requester]
		for _, s := range seeds {
			status, body := c.do("GET", "/v1/memories/"+s.memory, nil)
			check(who, "forged GET memory", status, body, true, true)
		}
		status, body := c.do("DELETE", "/v1/agents/"+ps[who].agent, nil)
		check(who, "forged DELETE agent", status, body, true, true)
	}

	// Every 403 is one denial event, per requester, in its organization's audit log.
	total403, totalEvents := 0, 0
	for _, who := range names {
		root := root
		if ps[who].org == "globex" {
			root = ps["globex-root"].c
		}
		events := 0
		for _, kind := range []string{"namespace_denied", "requester_denied"} {
			for cursor := ""; ; {
				var page struct {
					Events     []json.RawMessage `json:"events"`
					NextCursor string            `json:"next_cursor"`
				}
				q := url.Values{"kind": {kind}, "actor": {ps[who].requester}, "limit": {"100"}, "cursor": {cursor}}
				root.must(http.StatusOK, "GET", "/v1/audit?"+q.Encode(), nil, &page)
				events += len(page.Events)
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
		}
		if events != forbidden[who] {
			t.Errorf("%s: %d requests refused with 403, %d denial events in its organization", who, forbidden[who], events)
		}
		total403, totalEvents = total403+forbidden[who], totalEvents+events
	}
	t.Logf("probe: %d principals (%d sweeping), %d seeds, %d facts, %d entities, %d conflicts; %d requests: %d answered 403 (%d denial events), %d answered 404",
		len(names), len(names)-len(probeSkips), len(seeds), len(facts), len(entities), len(conflicts), requests, total403, totalEvents, notFound)

	// Every event each principal's webhooks received is about a space it may read, and
	// carries no word of another memory; each received what it should.
	readable := func(who, group string) bool {
		org := ps[who].org
		bare, ok := strings.CutPrefix(group, prefix(org))
		if !ok || (org == "" && strings.HasPrefix(group, "org-")) {
			return false
		}
		switch {
		case bare == "system":
			return admin(who)
		case bare == "team-"+team:
			return member(who)
		case bare == "user-"+ps[who].requester+"-shared":
			return true
		}
		agent, private := strings.CutSuffix(strings.TrimPrefix(bare, "agent-"), "-private")
		if private {
			return agent == ps[who].agent || (who == "bob" && agent == ps["alice"].agent)
		}
		agent, public := strings.CutSuffix(strings.TrimPrefix(bare, "agent-"), "-public")
		return public && exists[org+"/"+agent]
	}
	hooks.check(t, names, seeds, derived, readable, map[string][]string{
		"bob": {seeds[0].memory}, "carol": {teamMemory(seeds, "")}, "dave": {teamMemory(seeds, "")},
		"globex-dave": {teamMemory(seeds, "globex")}})

	// No score and no ranking depends on what the requester cannot read: alice's search
	// for her words scores the same once the other organization wrote them, many times,
	// into memories long and short (and its facts and entities with them). Last: its
	// webhooks would carry her words, written there.
	mine := []string{seeds[0].word, seeds[1].word}
	ranked := func() string {
		var found struct {
			Episodes []struct {
				ID    string
				Score float64
			}
			Facts []struct {
				ID    string
				Score float64
			}
			Entities []struct {
				ID    string
				Score float64
			}
		}
		ps["alice"].c.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": ps["alice"].agent,
			"query": strings.Join(mine, " ") + " works", "include": []string{"episodes", "facts", "entities"}}, &found)
		return fmt.Sprintf("%+v", found)
	}
	before := ranked()
	for i := range 24 {
		text := strings.Repeat(mine[i%2]+" ", 1+i%3) + "works at " + strings.Repeat("Elsewhere ", i%5) + "."
		ps["globex-alice"].c.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": ps["globex-alice"].agent,
			"visibility": "public", "messages": text}, nil)
	}
	var last added
	ps["globex-alice"].c.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": ps["globex-alice"].agent,
		"visibility": "public", "messages": mine[0] + " works at Elsewhere."}, &last)
	waitStatus(t, ps["globex-alice"].c, last.ID)
	if after := ranked(); after != before {
		t.Errorf("alice's search ranked %s before the other organization wrote her words, %s after", before, after)
	}
}

// teamMemory is the id of the team seed of org.
func teamMemory(seeds []*seed, org string) string {
	for _, s := range seeds {
		if s.space == "team" && s.org == org {
			return s.memory
		}
	}
	return ""
}

// seed is a memory of the probe's world and the word only it says.
type seed struct {
	org                 string // "" or globex
	word, space, memory string
	agent, owner        string          // the agent whose memory it is, the principal who may change it
	readers             map[string]bool // principals who may read it; nil: everyone
}

// toolStatus is the HTTP status REST gives for what an MCP tool answered: 200, or the
// status of the error code in the tool error.
func toolStatus(ok bool, out json.RawMessage) int {
	if ok {
		return http.StatusOK
	}
	var e toolError
	_ = json.Unmarshal(out, &e)
	return map[string]int{"forbidden": http.StatusForbidden, "not_found": http.StatusNotFound,
		"invalid": http.StatusBadRequest, "conflict": http.StatusConflict}[e.Error.Code]
}

// withdraw takes back bob's three extracted public memories (each stating that its
// word works at employer): deletes one, lets one expire and sweeps it, moves one to
// his private space and waits for its extraction there. Before, bob's public employer
// entity shows their words in its summary, as the sweep's check of it needs.
func withdraw(t *testing.T, bob client, withdrawn map[string]*seed, employer string) {
	t.Helper()
	summary := func() string {
		var found struct {
			Entities []struct{ Name, Summary string }
		}
		bob.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": withdrawn["moved"].agent,
			"query": employer, "include": []string{"entities"}}, &found)
		for _, e := range found.Entities {
			if e.Name == employer {
				return e.Summary
			}
		}
		return ""
	}
	for _, s := range withdrawn {
		waitStatus(t, bob, s.memory)
		if !strings.Contains(summary(), s.word) {
			t.Fatalf("the summary of %s does not show %s before it is withdrawn: %q", employer, s.word, summary())
		}
	}
	bob.must(http.StatusNoContent, "DELETE", "/v1/memories/"+withdrawn["deleted"].memory, nil, nil)
	expired := withdrawn["expired"].memory
	db := neo4jtest.DB(t)
	expireAndSweep(t, bob, expired, &service.Service{Mem: db, Dir: db, Audit: db, Log: neo4jtest.Logger(t), Now: time.Now})
	if n := neo4jtest.Count(t, "MATCH (e:Episodic {uuid: $id}) RETURN count(e)", map[string]any{"id": expired}); n != 0 {
		t.Fatal("the sweep left the expired memory")
	}
	moved := withdrawn["moved"].memory
	bob.must(http.StatusOK, "PATCH", "/v1/memories/"+moved, map[string]any{"visibility": "private"}, nil)
	waitStatus(t, bob, moved)
}
