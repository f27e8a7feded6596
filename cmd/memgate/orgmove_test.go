package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestMigrate_IntoOrg: a database written without organizations, as a memgate before
// them left it (no org on its agents, teams and requesters), moves into organization
// acme with `memgate migrate --into-org acme`: every group_id of nodes and
// relationships carries acme's prefix, and acme's requesters then read, search and
// share what they wrote before, while a key of the implicit organization finds nothing.
// Run again, the move has nothing left to do; an id used in both is refused.
func TestMigrate_IntoOrg(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	uri, _ := neo4jtest.Private(t)
	env := map[string]string{"MEMGATE_NEO4J_URI": uri, "MEMGATE_INGEST_POLL": "50ms"}
	type answer struct {
		status int
		body   map[string]any
	}
	call := func(base, key, requester, method, path string, body any) answer {
		t.Helper()
		var r io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			r = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, r)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Requester-Id", requester)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out := map[string]any{}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return answer{resp.StatusCode, out}
	}
	must := func(want int, a answer) map[string]any {
		t.Helper()
		if a.status != want {
			t.Fatalf("status %d, want %d: %v", a.status, want, a.body)
		}
		return a.body
	}
	done := func(base, key, requester, id string) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			m := call(base, key, requester, "GET", "/v1/memories/"+id, nil).body
			if m["status"] == "done" {
				return
			}
			if m["status"] == "failed" || time.Now().After(deadline) {
				t.Fatalf("memory %s: %v", id, m)
			}
		}
	}

	// The world, in dev mode (the implicit organization).
	srv, base := startBinary(t, env)
	must(201, call(base, "", "alice", "POST", "/v1/agents", map[string]any{"id": "assistant"}))
	private := must(202, call(base, "", "alice", "POST", "/v1/memories", map[string]any{"agent_id": "assistant",
		"visibility": "private", "messages": "Gina works at Vandelay."}))["id"].(string)
	public := must(202, call(base, "", "alice", "POST", "/v1/memories", map[string]any{"agent_id": "assistant",
		"visibility": "public", "messages": "Hal lives in Queens."}))["id"].(string)
	must(201, call(base, "", "root", "POST", "/v1/teams", map[string]any{"name": "research"}))
	must(204, call(base, "", "root", "PUT", "/v1/teams/research/members/alice", map[string]any{"role": "writer"}))
	must(204, call(base, "", "root", "PUT", "/v1/teams/research/members/bob", map[string]any{"role": "reader"}))
	must(204, call(base, "", "root", "PUT", "/v1/promoters/alice", nil))
	must(204, call(base, "", "alice", "PUT", "/v1/agents/assistant/shares/bob", nil))
	team := must(202, call(base, "", "alice", "POST", "/v1/memories", map[string]any{"agent_id": "assistant",
		"visibility": "team", "team": "research", "messages": "Ivy works at Kramerica."}))["id"].(string)
	for _, id := range []string{private, public, team} {
		done(base, "", "alice", id)
	}
	copied := must(202, call(base, "", "alice", "POST", "/v1/memories/"+public+"/promote", map[string]any{"target": "global"}))["id"].(string)
	done(base, "", "alice", copied)
	srv.stop(t)

	// As a memgate before organizations left it.
	if err := neo4jtest.Run(uri, "MATCH (n) WHERE n:Agent OR n:Team OR n:Principal REMOVE n.org", nil); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int64 { t.Helper(); return neo4jtest.CountAt(t, uri, q, nil) }
	before := count("MATCH (n) WHERE n.group_id IS NOT NULL RETURN count(n)") +
		count("MATCH ()-[r]->() WHERE r.group_id IS NOT NULL RETURN count(r)")

	if out, err := command(t, env, "migrate", "--into-org", "acme").CombinedOutput(); err != nil {
		t.Fatalf("migrate --into-org acme: %v\n%s", err, out)
	}
	if n := count("MATCH (n) WHERE n.group_id IS NOT NULL AND NOT n.group_id STARTS WITH 'org-acme_' RETURN count(n)") +
		count("MATCH ()-[r]->() WHERE r.group_id IS NOT NULL AND NOT r.group_id STARTS WITH 'org-acme_' RETURN count(r)"); n != 0 {
		t.Errorf("%d nodes and relationships kept a group_id outside acme", n)
	}
	if after := count("MATCH (n) WHERE n.group_id STARTS WITH 'org-acme_' RETURN count(n)") +
		count("MATCH ()-[r]->() WHERE r.group_id STARTS WITH 'org-acme_' RETURN count(r)"); after != before || after == 0 {
		t.Errorf("%d nodes and relationships in acme after the move, %d carried a group_id before", after, before)
	}
	if n := count("MATCH (n) WHERE (n:Agent OR n:Team OR n:Principal) AND n.org <> 'acme' RETURN count(n)"); n != 0 {
		t.Errorf("%d agents, teams or requesters are not acme's", n)
	}

	// acme's requesters find what they wrote; the implicit organization has nothing.
	keys := map[string]string{"acme": "k-acme-" + suffix(), "plain": "k-plain-" + suffix()}
	config := filepath.Join(t.TempDir(), "memgate.yaml")
	file := fmt.Sprintf("auth:\n  keys:\n    - {name: acme, sha256: %s, trusted: true, admin: true, org: acme}\n"+
		"    - {name: plain, sha256: %s, trusted: true}\n", access.HashKey(keys["acme"]), access.HashKey(keys["plain"]))
	if err := os.WriteFile(config, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, base = startBinary(t, env, "--config", config)
	got := must(200, call(base, keys["acme"], "alice", "GET", "/v1/memories/"+private, nil))
	if got["group_id"] != "org-acme_agent-assistant-private" {
		t.Errorf("alice's private memory in %v", got["group_id"])
	}
	for _, who := range []string{"alice", "bob"} { // bob: the share and the membership moved too
		for _, id := range []string{private, team, copied} {
			must(200, call(base, keys["acme"], who, "GET", "/v1/memories/"+id, nil))
		}
	}
	found := must(200, call(base, keys["acme"], "alice", "POST", "/v1/memories/search",
		map[string]any{"agent_id": "assistant", "query": "Gina Vandelay"}))
	if b, _ := json.Marshal(found["facts"]); !strings.Contains(string(b), "Vandelay") {
		t.Errorf("acme's search after the move: %s", b)
	}
	for _, id := range []string{private, public, team, copied} {
		must(404, call(base, keys["plain"], "alice", "GET", "/v1/memories/"+id, nil))
	}
	must(404, call(base, keys["plain"], "alice", "GET", "/v1/agents/assistant", nil))
	// A new agent of the implicit organization with an id acme uses.
	must(201, call(base, keys["plain"], "alice", "POST", "/v1/agents", map[string]any{"id": "assistant"}))
	srv.stop(t)

	out, err := command(t, env, "migrate", "--into-org", "acme").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "used in organization acme too") {
		t.Errorf("a move that would merge two agents under one id: %v\n%s", err, out)
	}
	if n := count("MATCH (a:Agent {id: 'assistant'}) RETURN count(a)"); n != 2 {
		t.Errorf("%d agents assistant after the refused move, want acme's and the implicit organization's", n)
	}
}
