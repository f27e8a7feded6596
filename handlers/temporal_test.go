package handlers_test

import (
	"net/http"
	"testing"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestQuickstart_AsOf (issue 31, points 1 and 2): the README's first session, with no
// reference times. The first message gives no start, so the Acme fact's start is
// assumed (today); the second ends it in March 2024, before that assumed start: the
// start becomes unknown instead of the interval inverting, and the graph answers the
// past over REST and MCP: as of January 2024 Acme, as of 2025 Globex, now Globex, with
// history both. The same when the second message comes as a rewrite (PATCH) of
// another memory, extracted again.
func TestQuickstart_AsOf(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	for _, patched := range []bool{false, true} {
		t.Run(map[bool]string{false: "posted", true: "patched"}[patched], func(t *testing.T) {
			t.Parallel()
			quickstart(t, srv.URL, patched)
		})
	}
}

func quickstart(t *testing.T, base string, patched bool) {
	w := newTeamWorld(t, base, "qs")
	ingest(t, "agent-"+w.agent+"-")
	second := "In March 2024 Alice left Acme and joined Globex."
	texts := []string{"Alice works at Acme as an engineer.", second}
	if patched {
		texts[1] = "Alice likes green tea."
	}
	var last added
	for _, text := range texts {
		w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": text}, &last)
		waitStatus(t, w.owner, last.ID)
	}
	if patched {
		w.owner.must(http.StatusOK, "PATCH", "/v1/memories/"+last.ID, map[string]any{"messages": second}, nil)
		waitStatus(t, w.owner, last.ID)
	}
	if n := neo4jtest.Count(t, "MATCH ()-[r:RELATES_TO]->() WHERE r.group_id STARTS WITH $g AND r.invalid_at < r.valid_at RETURN count(r)",
		map[string]any{"g": "agent-" + w.agent + "-"}); n != 0 {
		t.Errorf("%d facts end before they begin", n)
	}
	session := mcpSession(t, base, w.owner.key, w.owner.requester)
	for _, c := range []struct {
		name  string
		extra map[string]any
		want  string
	}{
		{"as of January 2024", map[string]any{"as_of": "2024-01-01T00:00:00Z"}, "Alice WORKS_AT Acme"},
		{"as of 2025", map[string]any{"as_of": "2025-01-01T00:00:00Z"}, "Alice WORKS_AT Globex"},
		{"now", nil, "Alice WORKS_AT Globex"},
		{"with history", map[string]any{"include_expired": true}, "Alice WORKS_AT Acme, Alice WORKS_AT Globex"},
	} {
		body := map[string]any{"agent_id": w.agent, "query": "Where does Alice work?", "include": []string{"facts"}}
		for k, v := range c.extra {
			body[k] = v
		}
		var rest, viaMCP searchResult
		w.owner.must(http.StatusOK, "POST", "/v1/memories/search", body, &rest)
		if got := rest.targets(); got != c.want {
			t.Errorf("REST, %s: %q, want %q", c.name, got, c.want)
		}
		if !callTool(t, session, "search_memory", body, &viaMCP) {
			t.Fatalf("MCP search_memory, %s: refused", c.name)
		}
		if got := viaMCP.targets(); got != c.want {
			t.Errorf("MCP, %s: %q, want %q", c.name, got, c.want)
		}
		for _, f := range rest.Facts {
			if f.Target.Name == "Acme" && (f.ValidAt != nil || f.InvalidAt == nil || f.InvalidAt.Format("2006-01") != "2024-03") {
				t.Errorf("%s: the Acme fact holds %v to %v, want an unknown start and March 2024", c.name, f.ValidAt, f.InvalidAt)
			}
		}
	}
}

// TestConflicts_KeepNewBeforeAnAssumedStart (issue 31, point 1, review mode): keeping
// the new fact ends the old one when the new one began; when that is before the old
// fact's assumed start, the old start becomes unknown, never after its end.
func TestConflicts_KeepNewBeforeAnAssumedStart(t *testing.T) {
	t.Parallel()
	owner, _, agent := ownerWorld(t)
	group := "agent-" + agent + "-private"
	id := neo4jtest.SeedConflict(t, group, "Erin"+randomSuffix())
	// The old fact's start was assumed (its memory gave none) and is after the new one's.
	if err := neo4jtest.Run(neo4jtest.URI(t), `MATCH (c:Conflict {uuid: $id}) MATCH ()-[o:RELATES_TO {uuid: c.old_fact}]->()
		SET o.valid_at = datetime('2026-01-01T00:00:00Z'), o.valid_at_assumed = true`, map[string]any{"id": id}); err != nil {
		t.Fatal(err)
	}
	owner.must(http.StatusOK, "POST", "/v1/conflicts/"+id+"/resolve", map[string]any{"keep": "new"}, nil)
	if n := neo4jtest.Count(t, `MATCH (c:Conflict {uuid: $id}) MATCH ()-[o:RELATES_TO {uuid: c.old_fact}]->()
		WHERE o.valid_at IS NULL AND o.invalid_at.epochSeconds = datetime('2025-01-01T00:00:00Z').epochSeconds
		  AND o.expired_at IS NOT NULL RETURN count(o)`,
		map[string]any{"id": id}); n != 1 {
		t.Error("the old fact does not run from an unknown start to the new fact's start (2025)")
	}
}

// TestContradiction_NewerStatedStartBeforeAnAssumedOne (issue 31, points 1 and 7): the
// old home's start was assumed (today); the new one is stated from June 2025 (LIVES_IN
// holds one place at a time). The old fact ends in June 2025 with its start unknown,
// and the new one is current, not ended at the old one's assumed start.
func TestContradiction_NewerStatedStartBeforeAnAssumedOne(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "pri")
	ingest(t, "agent-"+w.agent+"-")
	for _, text := range []string{"Priya lives in Oslo.", "Since June 2025 Priya lives in Bergen."} {
		var a added
		w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": text}, &a)
		waitStatus(t, w.owner, a.ID)
	}
	var now, history searchResult
	w.owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": w.agent, "query": "Where does Priya live?",
		"include": []string{"facts"}}, &now)
	if got := now.targets(); got != "Priya LIVES_IN Bergen" {
		t.Errorf("where Priya lives now: %q, want Bergen", got)
	}
	w.owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": w.agent, "query": "Where does Priya live?",
		"include": []string{"facts"}, "include_expired": true}, &history)
	for _, f := range history.Facts {
		if f.Target.Name == "Oslo" && (f.ValidAt != nil || f.InvalidAt == nil || f.InvalidAt.Format("2006-01") != "2025-06") {
			t.Errorf("Oslo holds %v to %v, want an unknown start and June 2025", f.ValidAt, f.InvalidAt)
		}
	}
}
