package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

type conflict struct {
	ID         string  `json:"id"`
	GroupID    string  `json:"group_id"`
	EpisodeID  string  `json:"episode_id"`
	Status     string  `json:"status"`
	Keep       string  `json:"keep"`
	ResolvedBy string  `json:"resolved_by"`
	Old        factHit `json:"old"`
	New        factHit `json:"new"`
}

type conflictList struct {
	Items []conflict `json:"items"`
}

// of is the listed conflicts in agent's spaces: the global space, which every
// requester sees, holds other tests' conflicts while they run.
func (l conflictList) of(agent string) []conflict {
	var out []conflict
	for _, c := range l.Items {
		if strings.HasPrefix(c.GroupID, "agent-"+agent+"-") {
			out = append(out, c)
		}
	}
	return out
}

// TestConflicts_Review: with memory.conflicts review, a move contradicting where a
// person lived ends nothing: both facts stay current, each naming the conflict, and
// search shows both. The agent's owner resolves the private one over REST (keep new:
// the old fact ends when the new one began, so the default search returns only the
// new one and as_of before the move the old one) and the public one over MCP (keep
// both). Another requester sees only the public conflict, cannot resolve it (403,
// audited) and gets 404 for the private one; a second resolution answers 409.
func TestConflicts_Review(t *testing.T) {
	t.Parallel()
	owner, other, agent := ownerWorld(t)
	ingestWith(t, true, "agent-"+agent+"-")
	write := func(text, at, visibility string) string {
		var a added
		owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{
			"agent_id": agent, "messages": text, "reference_time": at, "visibility": visibility}, &a)
		waitStatus(t, owner, a.ID)
		return a.ID
	}
	write("Bob lives in Rome.", "2023-01-10T09:00:00Z", "private")
	write("In March 2024 Bob moved to Berlin.", "2024-03-20T09:00:00Z", "private")
	write("Carol lives in Oslo.", "2023-02-01T09:00:00Z", "public")
	bergen := write("In May 2024 Carol moved to Bergen.", "2024-05-10T09:00:00Z", "public")

	var mine conflictList
	owner.must(http.StatusOK, "GET", "/v1/conflicts?agent_id="+agent, nil, &mine)
	byTarget := map[string]conflict{}
	for _, c := range mine.of(agent) {
		byTarget[c.Old.Target.Name+">"+c.New.Target.Name] = c
		if c.Status != "open" || c.Old.InvalidAt != nil || c.Old.ExpiredAt != nil || c.New.InvalidAt != nil ||
			len(c.Old.Conflicts) != 1 || c.Old.Conflicts[0] != c.ID || len(c.New.Conflicts) != 1 || c.New.Conflicts[0] != c.ID {
			t.Errorf("conflict %+v: want open, both facts current and naming it", c)
		}
	}
	bob, carol := byTarget["Rome>Berlin"], byTarget["Oslo>Bergen"]
	if len(mine.of(agent)) != 2 || bob.ID == "" || carol.ID == "" {
		t.Fatalf("owner's conflicts %+v, want Rome>Berlin and Oslo>Bergen", mine.of(agent))
	}
	search := func(c client, extra map[string]any) searchResult {
		body := map[string]any{"agent_id": agent, "query": "Where does Bob live?", "include": []string{"facts"}}
		for k, v := range extra {
			body[k] = v
		}
		var r searchResult
		c.must(http.StatusOK, "POST", "/v1/memories/search", body, &r)
		return r
	}
	found := search(owner, nil)
	marked := 0
	for _, f := range found.Facts {
		if f.Relation == "LIVES_IN" && len(f.Conflicts) == 1 {
			marked++
		}
	}
	if marked != 4 {
		t.Errorf("search: %q with %d facts marked, want the four LIVES_IN facts current and marked", found.targets(), marked)
	}

	// Another requester: the public conflict only; no right to resolve it.
	var theirs conflictList
	other.must(http.StatusOK, "GET", "/v1/conflicts?agent_id="+agent, nil, &theirs)
	if got := theirs.of(agent); len(got) != 1 || got[0].ID != carol.ID {
		t.Errorf("another requester's conflicts %+v, want only the public one", got)
	}
	other.must(http.StatusForbidden, "POST", "/v1/conflicts/"+carol.ID+"/resolve", map[string]any{"keep": "new"}, nil)
	other.must(http.StatusNotFound, "POST", "/v1/conflicts/"+bob.ID+"/resolve", map[string]any{"keep": "new"}, nil)
	if denied := audited(owner, "namespace_denied", carol.ID); len(denied) != 1 || denied[0].Actor != other.requester {
		t.Errorf("denial events about the public conflict: %+v, want one by %s", denied, other.requester)
	}
	for _, bad := range []map[string]any{{"keep": "newest"}, {"keep": ""}, {}} {
		if status, _ := owner.sendMalformed("POST", "/v1/conflicts/"+bob.ID+"/resolve", bad); status != http.StatusBadRequest {
			t.Errorf("keep %v: status %d, want 400", bad["keep"], status)
		}
	}

	// The owner keeps the move over REST.
	var resolved conflict
	owner.must(http.StatusOK, "POST", "/v1/conflicts/"+bob.ID+"/resolve", map[string]any{"keep": "new"}, &resolved)
	if resolved.Status != "resolved" || resolved.Keep != "new" || resolved.ResolvedBy != owner.requester ||
		resolved.Old.InvalidAt == nil || resolved.Old.InvalidAt.Format("2006-01") != "2024-03" || resolved.Old.ExpiredAt == nil ||
		resolved.New.InvalidAt != nil || len(resolved.Old.Conflicts)+len(resolved.New.Conflicts) != 0 {
		t.Errorf("resolved %+v: want Rome ended March 2024 and expired, Berlin current, no marks", resolved)
	}
	owner.must(http.StatusConflict, "POST", "/v1/conflicts/"+bob.ID+"/resolve", map[string]any{"keep": "old"}, nil)
	if got := search(owner, map[string]any{"relations": []string{"LIVES_IN"}, "query": "Where does Bob live? Rome Berlin"}).targets(); got != "Bob LIVES_IN Berlin, Carol LIVES_IN Bergen, Carol LIVES_IN Oslo" {
		t.Errorf("default search after keep new: %q", got)
	}
	if got := search(owner, map[string]any{"as_of": "2023-06-01T00:00:00Z"}).targets(); got != "Bob LIVES_IN Rome, Carol LIVES_IN Oslo" {
		t.Errorf("as_of 2023 after keep new: %q, want Rome (and Oslo)", got)
	}
	if events := audited(owner, "conflict_resolved", bob.ID); len(events) != 1 || events[0].Reason != "keep new" || events[0].Actor != owner.requester {
		t.Errorf("conflict_resolved events %+v, want one by the owner, keep new", events)
	}

	// The public one over MCP: listed, then kept both.
	session := mcpSession(t, owner.base, matrixKeys["trusted"], owner.requester)
	var listed conflictList
	if !callTool(t, session, "list_conflicts", map[string]any{"agent_id": agent}, &listed) || len(listed.of(agent)) != 1 || listed.of(agent)[0].ID != carol.ID {
		t.Fatalf("list_conflicts: %+v, want the public conflict only", listed.of(agent))
	}
	var both conflict
	if !callTool(t, session, "resolve_conflict", map[string]any{"id": carol.ID, "keep": "both"}, &both) ||
		both.Keep != "both" || both.Old.InvalidAt != nil || both.New.InvalidAt != nil || both.Old.ExpiredAt != nil {
		t.Errorf("resolve_conflict keep both: %+v, want both facts current", both)
	}
	owner.must(http.StatusOK, "GET", "/v1/conflicts?agent_id="+agent, nil, &mine)
	if got := mine.of(agent); len(got) != 0 {
		t.Errorf("open conflicts after both resolutions: %+v", got)
	}

	// A conflict goes with its facts (the memory that alone stated one deleted), and
	// with its space (the agent erased).
	count := `MATCH (c:Conflict) WHERE c.group_id IN $groups RETURN count(c)`
	groups := map[string]any{"groups": []string{"agent-" + agent + "-private", "agent-" + agent + "-public"}}
	owner.must(http.StatusNoContent, "DELETE", "/v1/memories/"+bergen, nil, nil)
	if n := neo4jtest.Count(t, count, groups); n != 1 {
		t.Fatalf("%d conflict nodes in the agent's spaces once Bergen's memory is deleted, want Bob's only", n)
	}
	owner.must(http.StatusOK, "DELETE", "/v1/agents/"+agent, nil, nil)
	if n := neo4jtest.Count(t, count, groups); n != 0 {
		t.Errorf("%d conflict nodes left after the agent was erased", n)
	}
}
