package handlers_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memgate/memgate/service"
)

// A fact stated directly is added as an extracted one is: its entities matched in the
// space (the Alice an extracted memory made), a fact it contradicts ended by the same
// temporal rules, the fact supported by the memory that records it (deleting that
// memory takes the fact); over MCP too. The same write rules hold: another requester
// may not write to the owner's agent (403), an agent that does not exist is 404, and
// credentials are refused; nothing of another owner's fact reaches the owner.
func TestFacts_Direct(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) {
		s.Limits.VisibilityRules = []service.VisibilityRule{{Name: "att", Pattern: regexp.MustCompile(`AT&T`)},
			{Name: "anchored", Pattern: regexp.MustCompile(`(?i)^confidential`)}}
	})
	w := newTeamWorld(t, srv.URL, "dir")
	ingest(t, "agent-"+w.agent+"-")
	var m struct{ ID string }
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "Alice works at Acme as an engineer."}, &m)
	waitStatus(t, w.owner, m.ID)
	var extracted searchResult
	w.owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": w.agent, "query": "Alice Acme", "include": []string{"entities"}}, &extracted)
	alice := extracted.entity("Alice")
	if alice.ID == "" {
		t.Fatalf("no Alice entity from the extracted memory: %+v", extracted.Entities)
	}

	state := func(body map[string]any) factHit {
		t.Helper()
		body["agent_id"] = w.agent
		var f factHit
		w.owner.must(http.StatusCreated, "POST", "/v1/facts", body, &f)
		return f
	}
	lisbon := state(map[string]any{"source": map[string]any{"name": "Alice", "type": "Person"}, "relation": "LIVES_IN",
		"target": map[string]any{"name": "Lisbon", "type": "Location"}, "valid_at": "2022-01-01T00:00:00Z"})
	if lisbon.Source.ID != alice.ID || lisbon.Relation != "LIVES_IN" || lisbon.Target.Name != "Lisbon" ||
		lisbon.Fact != "Alice lives in Lisbon" || lisbon.ValidAt == nil || lisbon.ValidAt.Format("2006-01-02") != "2022-01-01" ||
		lisbon.GroupID != "agent-"+w.agent+"-private" || len(lisbon.Episodes) != 1 {
		t.Fatalf("the stated fact: %+v (Alice is %s)", lisbon, alice.ID)
	}
	var record struct {
		Source            string `json:"source"`
		SourceDescription string `json:"source_description"`
	}
	w.owner.must(http.StatusOK, "GET", "/v1/memories/"+lisbon.Episodes[0], nil, &record)
	if record.Source != "json" || record.SourceDescription != "direct" {
		t.Errorf("the memory that records the fact: %+v", record)
	}
	berlin := state(map[string]any{"source": map[string]any{"name": "Alice"}, "relation": "LIVES_IN",
		"target": map[string]any{"name": "Berlin"}, "fact": "Alice moved to Berlin.", "valid_at": "2024-03-01T00:00:00Z"})
	if berlin.Target.Name != "Berlin" {
		t.Errorf("the answer to Berlin is another fact: %+v", berlin)
	}
	var ended factHit
	w.owner.must(http.StatusOK, "GET", "/v1/facts/"+lisbon.ID, nil, &ended)
	if ended.InvalidAt == nil || ended.InvalidAt.Format("2006-01-02") != "2024-03-01" || ended.ExpiredAt == nil {
		t.Errorf("Lisbon, contradicted by Berlin from March 2024: invalid_at %v expired_at %v", ended.InvalidAt, ended.ExpiredAt)
	}
	var now searchResult
	w.owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": w.agent, "query": "Where does Alice live?"}, &now)
	if got := now.targets(); !strings.Contains(got, "Alice LIVES_IN Berlin") || strings.Contains(got, "Lisbon") {
		t.Errorf("current facts: %s", got)
	}

	// Over MCP, the same; the memory that records it deleted takes the fact with it.
	var viaMCP factHit
	s := mcpSession(t, srv.URL, w.owner.key, w.owner.requester)
	if !callTool(t, s, "add_fact", map[string]any{"agent_id": w.agent, "source": map[string]any{"name": "Alice"},
		"relation": "MENTORS", "target": map[string]any{"name": "Bruno"}}, &viaMCP) || viaMCP.Relation != "MENTORS" || viaMCP.Source.ID != alice.ID {
		t.Fatalf("add_fact: %+v", viaMCP)
	}
	w.owner.must(http.StatusNoContent, "DELETE", "/v1/memories/"+berlin.Episodes[0], nil, nil)
	w.owner.must(http.StatusNotFound, "GET", "/v1/facts/"+berlin.ID, nil, nil)

	// Refused as a memory would be.
	fact := func(agent string) map[string]any {
		return map[string]any{"agent_id": agent, "source": map[string]any{"name": "Alice"}, "relation": "WORKS_AT",
			"target": map[string]any{"name": "Initech"}}
	}
	w.other.must(http.StatusForbidden, "POST", "/v1/facts", fact(w.agent), nil)
	w.owner.must(http.StatusNotFound, "POST", "/v1/facts", fact("no-such-agent-"+w.team), nil)
	secret := fact(w.agent)
	secret["fact"] = "Alice's password=hunter2 opens Initech"
	w.owner.must(http.StatusUnprocessableEntity, "POST", "/v1/facts", secret, nil)
	for _, bad := range []map[string]any{
		{"source": map[string]any{"name": "Alice"}, "relation": "works_at", "target": map[string]any{"name": "Initech"}},
		{"source": map[string]any{"name": "Alice"}, "relation": "KNOWS", "target": map[string]any{"name": "alice"}},
		{"source": map[string]any{"name": ""}, "relation": "KNOWS", "target": map[string]any{"name": "Bob"}},
		{"source": map[string]any{"name": strings.Repeat("a", 101)}, "relation": "KNOWS", "target": map[string]any{"name": "Bob"}},
		{"source": map[string]any{"name": "Alice", "type": "not a type"}, "relation": "KNOWS", "target": map[string]any{"name": "Bob"}},
		{"source": map[string]any{"name": "Alice"}, "relation": "KNOWS", "target": map[string]any{"name": "Bob"},
			"valid_at": "2024-01-01T00:00:00Z", "invalid_at": "2023-01-01T00:00:00Z"},
		{"source": map[string]any{"name": "Alice"}, "relation": "KNOWS", "target": map[string]any{"name": "Bob"}, "group_id": "x"},
	} {
		bad["agent_id"] = w.agent
		if status, out := w.owner.sendMalformed("POST", "/v1/facts", bad); status != http.StatusBadRequest {
			t.Errorf("POST /v1/facts %v: %d %s, want 400", bad, status, out)
		}
	}

	// The visibility rules and the credential refusal read what the fact says: a name
	// with "&", a sentence a rule anchors at its start, and a memory in the direct shape
	// whose JSON hides a password or the rule's words behind escapes.
	for _, body := range []map[string]any{
		{"agent_id": w.agent, "visibility": "public", "source": map[string]any{"name": "Bob"}, "relation": "WORKS_AT",
			"target": map[string]any{"name": "AT&T"}},
		{"agent_id": w.agent, "visibility": "public", "source": map[string]any{"name": "Merger"}, "relation": "INVOLVES",
			"target": map[string]any{"name": "Initech"}, "fact": "Confidential: a merger with Initech"},
	} {
		var kept factHit
		w.owner.must(http.StatusCreated, "POST", "/v1/facts", body, &kept)
		if kept.GroupID != "agent-"+w.agent+"-private" {
			t.Errorf("a fact a visibility rule matches landed in %s, want the private space", kept.GroupID)
		}
	}
	crafted := func(fact string) map[string]any {
		return map[string]any{"agent_id": w.agent, "visibility": "public", "source": "json", "source_description": "direct",
			"messages": `{"entities":[{"name":"Bob"},{"name":"Laptop"}],"facts":[{"source":"Bob","target":"Laptop","relation":"HAS","fact":"` + fact + `"}]}`}
	}
	w.owner.must(http.StatusUnprocessableEntity, "POST", "/v1/memories", crafted(`my p\u0061ssword is hunter2xyz, key AKI\u0041IOSFODNN7EXAMPLE`), nil)
	var hidden struct {
		GroupID        string `json:"group_id"`
		VisibilityRule string `json:"visibility_rule"`
	}
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", crafted(`Bob works at AT\u0026T`), &hidden)
	if hidden.GroupID != "agent-"+w.agent+"-private" || hidden.VisibilityRule != "att" {
		t.Errorf("a direct memory whose escapes hide a rule's words: %+v, want private by att", hidden)
	}

	// Another owner's fact never reaches the owner's agent.
	decoy := "Decoy" + strings.ToUpper(w.team[len(w.team)-4:])
	theirs := w.other.in(t)
	other := "dir-b-" + w.agent
	theirs.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": other}, nil)
	ingest(t, "agent-"+other+"-")
	var d factHit
	theirs.must(http.StatusCreated, "POST", "/v1/facts", map[string]any{"agent_id": other, "source": map[string]any{"name": "Alice"},
		"relation": "WORKS_AT", "target": map[string]any{"name": decoy}}, &d)
	if d.Source.ID == alice.ID {
		t.Errorf("another owner's fact took the owner's Alice: entities are matched within a space only")
	}
	var mine searchResult
	w.owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": w.agent, "query": "Alice " + decoy}, &mine)
	for _, f := range mine.Facts {
		if strings.Contains(f.Fact, decoy) || f.Target.Name == decoy {
			t.Errorf("another owner's fact in the owner's search: %+v", f)
		}
	}
}

// Under memory.conflicts: review, a stated fact that contradicts one is held with it
// for review: both stay current and the conflict is listed.
func TestFacts_DirectUnderReview(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "dirr")
	ingestWith(t, true, "agent-"+w.agent+"-")
	for _, city := range []string{"Lisbon", "Berlin"} {
		w.owner.must(http.StatusCreated, "POST", "/v1/facts", map[string]any{"agent_id": w.agent, "source": map[string]any{"name": "Alice"},
			"relation": "LIVES_IN", "target": map[string]any{"name": city}}, nil)
	}
	var conflicts struct{ Items []map[string]any }
	w.owner.must(http.StatusOK, "GET", "/v1/conflicts?agent_id="+w.agent, nil, &conflicts)
	// The agent's view holds the global space and its teams' spaces too, where tests
	// running beside this one seed conflicts: the facts stated here are the private
	// space's.
	conflicts.Items = slices.DeleteFunc(conflicts.Items, func(c map[string]any) bool { return c["group_id"] != "agent-"+w.agent+"-private" })
	var now searchResult
	w.owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": w.agent, "query": "Where does Alice live?"}, &now)
	if len(conflicts.Items) != 1 || now.targets() != "Alice LIVES_IN Berlin, Alice LIVES_IN Lisbon" {
		t.Errorf("under review: %d conflicts, current facts %q; want one conflict and both current", len(conflicts.Items), now.targets())
	}
}
