package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// A memory written with extract false is done at once and searchable as a memory, and
// never reaches the pipeline: not when written alone or in a batch, not after its
// content changes, not when its team's dissolution hands it back to its agent's
// private space. A memory written beside it is extracted as usual.
func TestMemories_NoExtraction(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "nox")
	ingest(t, "agent-"+w.agent+"-", "team-"+w.team)
	post := func(body map[string]any) string {
		t.Helper()
		var a struct{ ID, Status string }
		w.owner.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
		if body["extract"] == false && a.Status != "done" {
			t.Errorf("a memory without extraction was accepted as %s, want done", a.Status)
		}
		return a.ID
	}
	plain := post(map[string]any{"agent_id": w.agent, "messages": "Bob works at Initech as a designer.", "extract": false})
	inTeam := post(map[string]any{"agent_id": w.agent, "messages": "Carol works at Vandelay as a buyer.", "extract": false,
		"visibility": "team", "team": w.team})
	var batch struct{ Results []struct{ ID, Status string } }
	w.owner.must(http.StatusOK, "POST", "/v1/memories/batch", map[string]any{"items": []map[string]any{
		{"agent_id": w.agent, "messages": "Erin works at Pendant as a clerk.", "extract": false}}}, &batch)
	if len(batch.Results) != 1 || batch.Results[0].Status != "done" {
		t.Fatalf("batch: %+v, want one memory done", batch.Results)
	}
	waitStatus(t, w.owner, post(map[string]any{"agent_id": w.agent, "messages": "Dave works at Hooli as a chef."}))

	if s, body := w.owner.patch(plain, "", map[string]any{"messages": "Bob works at Initech as a lead designer."}); s != http.StatusOK {
		t.Fatalf("patch: %d %s", s, body)
	}
	w.admin.must(http.StatusOK, "DELETE", "/v1/teams/"+w.team, nil, nil)
	// The pipeline handles a space in order: once a later memory is done, the earlier
	// ones of the space have been claimed if they were ever going to be.
	waitStatus(t, w.owner, post(map[string]any{"agent_id": w.agent, "messages": "Frank works at Globex as a pilot."}))

	for _, id := range []string{plain, inTeam, batch.Results[0].ID} {
		var m struct {
			Status   string `json:"status"`
			Attempts int    `json:"attempts"`
			Extract  *bool  `json:"extract"`
			GroupID  string `json:"group_id"`
		}
		w.owner.must(http.StatusOK, "GET", "/v1/memories/"+id, nil, &m)
		if m.Status != "done" || m.Attempts != 0 || m.Extract == nil || *m.Extract {
			t.Errorf("memory %s: %+v; want done, never attempted, extract false", id, m)
		}
		if n := neo4jtest.Count(t, "MATCH (:Episodic {uuid: $id})-[:MENTIONS]->(n) RETURN count(n)", map[string]any{"id": id}); n != 0 {
			t.Errorf("memory %s mentions %d entities", id, n)
		}
	}
	var facts struct {
		Items []struct{ Fact string } `json:"items"`
	}
	w.owner.must(http.StatusOK, "GET", "/v1/facts?agent_id="+w.agent+"&limit=100", nil, &facts)
	var said []string
	for _, f := range facts.Items {
		said = append(said, f.Fact)
	}
	all := strings.Join(said, " | ")
	if !strings.Contains(all, "Hooli") || !strings.Contains(all, "Globex") {
		t.Errorf("the extracted memories' facts are missing: %s", all)
	}
	for _, word := range []string{"Initech", "Vandelay", "Pendant"} {
		if strings.Contains(all, word) {
			t.Errorf("a fact of a memory without extraction: %s", all)
		}
	}
	var found searchResult
	w.owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": w.agent, "query": "Initech designer"}, &found)
	if len(found.Episodes) == 0 || found.Episodes[0].ID != plain {
		t.Errorf("search for the memory without extraction: %+v", found.Episodes)
	}
}
