package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	memclient "github.com/memgate/memgate/client"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestQuickstart_AsOf (issue 31, points 1 and 2): the README's first session. The
// first message gives no start, so the Acme fact's start is assumed (its reference
// time); the second ends it in March 2024. When that is before the assumed start (no
// reference time: today; or an import dated 2025) the start becomes unknown instead
// of the interval inverting; when after it (dated 2023) the assumed start stays. Either
// way the graph answers the past over REST and MCP: as of January 2024 Acme, as of
// 2025 Globex, now Globex, with history both. The same whether the messages are
// posted, the second comes as a rewrite (PATCH) of another memory, extracted again, or
// both come in one import file.
func TestQuickstart_AsOf(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	for _, c := range []struct {
		how           string
		first, second string // reference times; "" for none (now)
	}{
		{"posted", "", ""}, {"posted", "2023-05-01", ""},
		{"patched", "", ""}, {"patched", "2023-05-01", ""},
		{"imported", "2025-01-01", "2025-02-01"}, {"imported", "2023-05-01", "2024-06-01"},
	} {
		t.Run(c.how+" "+c.first, func(t *testing.T) {
			t.Parallel()
			quickstart(t, srv.URL, c.how, c.first, c.second)
		})
	}
}

func quickstart(t *testing.T, base, how, first, second string) {
	w := newTeamWorld(t, base, "qs")
	ingest(t, "agent-"+w.agent+"-")
	left := "In March 2024 Alice left Acme and joined Globex."
	lines := []map[string]any{{"agent_id": w.agent, "messages": "Alice works at Acme as an engineer."},
		{"agent_id": w.agent, "messages": left}}
	for i, at := range []string{first, second} {
		if at != "" {
			lines[i]["reference_time"] = at + "T00:00:00Z"
		}
	}
	switch how {
	case "imported":
		importLines(t, base, w.owner, lines)
		var page struct{ Items []struct{ ID string } }
		w.owner.must(http.StatusOK, "GET", "/v1/memories?agent_id="+w.agent, nil, &page)
		if len(page.Items) != 2 {
			t.Fatalf("%d memories imported, want 2", len(page.Items))
		}
		for _, m := range page.Items {
			waitStatus(t, w.owner, m.ID)
		}
	default:
		if how == "patched" {
			lines[1]["messages"] = "Alice likes green tea."
		}
		var last added
		for _, line := range lines {
			w.owner.must(http.StatusAccepted, "POST", "/v1/memories", line, &last)
			waitStatus(t, w.owner, last.ID)
		}
		if how == "patched" {
			w.owner.must(http.StatusOK, "PATCH", "/v1/memories/"+last.ID, map[string]any{"messages": left}, nil)
			waitStatus(t, w.owner, last.ID)
		}
	}
	if n := neo4jtest.Count(t, "MATCH ()-[r:RELATES_TO]->() WHERE r.group_id STARTS WITH $g AND r.invalid_at < r.valid_at RETURN count(r)",
		map[string]any{"g": "agent-" + w.agent + "-"}); n != 0 {
		t.Errorf("%d facts end before they begin", n)
	}
	wantStart := "" // the assumed start, when before the end
	if first != "" && first < "2024-03" {
		wantStart = first
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
			start := ""
			if f.ValidAt != nil {
				start = f.ValidAt.Format(time.DateOnly)
			}
			if f.Target.Name == "Acme" && (start != wantStart || f.InvalidAt == nil || f.InvalidAt.Format("2006-01") != "2024-03") {
				t.Errorf("%s: the Acme fact holds %v to %v, want a start of %q and March 2024", c.name, f.ValidAt, f.InvalidAt, wantStart)
			}
		}
	}
}

// importLines imports lines as memgate import does (client.Import, a JSON Lines file)
// as c, and fails the test unless every line is accepted.
func importLines(t *testing.T, base string, c client, lines []map[string]any) {
	t.Helper()
	var file bytes.Buffer
	for _, l := range lines {
		b, _ := json.Marshal(l)
		file.Write(append(b, '\n'))
	}
	path := filepath.Join(t.TempDir(), "memories.jsonl")
	if err := os.WriteFile(path, file.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var rejects bytes.Buffer
	sum, err := memclient.Import(context.Background(), memclient.New(base, c.key, c.requester),
		memclient.ImportOptions{Path: path, BatchSize: len(lines), Workers: 1, Rejects: &rejects})
	if err != nil || sum.Accepted != len(lines) {
		t.Fatalf("import: %+v %v %s", sum, err, rejects.String())
	}
}

// TestConflicts_KeepNewBeforeAnAssumedStart (issue 31, point 1, review mode; issue
// 32: one rule for ending a fact): keeping the new fact ends the old one when the new
// one began (2025), and what Neo4j then holds is what graph.Fact.End decides for the
// same fact, case by case: an assumed start after the end becomes unknown, one before
// it stays (still assumed); a stated start after the end is kept as overruled, one
// before it stays; an unknown start stays unknown.
func TestConflicts_KeepNewBeforeAnAssumedStart(t *testing.T) {
	t.Parallel()
	owner, _, agent := ownerWorld(t)
	group := "agent-" + agent + "-private"
	newStart := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		start   string // the old fact's; "" unknown
		assumed bool
	}{{"2026-01-01", true}, {"2024-01-01", true}, {"2026-01-01", false}, {"2024-01-01", false}, {"", false}} {
		id := neo4jtest.SeedConflict(t, group, "Erin"+randomSuffix())
		old := graph.Fact{StartAssumed: c.assumed}
		var start any // nil: unknown
		if c.start != "" {
			at, _ := time.Parse(time.DateOnly, c.start)
			old.ValidAt, start = &at, at
		}
		if err := neo4jtest.Run(neo4jtest.URI(t), `MATCH (c:Conflict {uuid: $id}) MATCH ()-[o:RELATES_TO {uuid: c.old_fact}]->()
			SET o.valid_at = $start, o.valid_at_assumed = $assumed`,
			map[string]any{"id": id, "start": start, "assumed": c.assumed}); err != nil {
			t.Fatal(err)
		}
		old.End(newStart, time.Now())
		owner.must(http.StatusOK, "POST", "/v1/conflicts/"+id+"/resolve", map[string]any{"keep": "new"}, nil)
		day := func(at *time.Time) string {
			if at == nil {
				return ""
			}
			return at.UTC().Format(time.DateOnly)
		}
		if n := neo4jtest.Count(t, `MATCH (c:Conflict {uuid: $id}) MATCH ()-[o:RELATES_TO {uuid: c.old_fact}]->()
			WHERE coalesce(toString(date(o.valid_at)), '') = $start AND coalesce(o.valid_at_assumed, false) = $assumed
			  AND coalesce(toString(date(o.overruled_valid_at)), '') = $overruled AND toString(date(o.invalid_at)) = $end
			  AND o.expired_at IS NOT NULL RETURN count(o)`,
			map[string]any{"id": id, "start": day(old.ValidAt), "assumed": old.StartAssumed, "overruled": day(old.OverruledStart),
				"end": day(old.InvalidAt)}); n != 1 {
			t.Errorf("start %q (assumed %v): the stored old fact is not what graph.Fact.End makes of it: from %q (assumed %v, overruled %q) to %q",
				c.start, c.assumed, day(old.ValidAt), old.StartAssumed, day(old.OverruledStart), day(old.InvalidAt))
		}
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
