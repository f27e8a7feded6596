package handlers_test

import (
	"net/http"
	"testing"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

type dissolution struct {
	Team     string `json:"team"`
	DryRun   bool   `json:"dry_run"`
	Moved    int    `json:"moved"`
	Erased   int    `json:"erased"`
	Creators []struct {
		AgentID  string `json:"agent_id"`
		Memories int    `json:"memories"`
	} `json:"creators"`
}

// TestDissolveTeam: the team's owner asks what dissolving would move, dissolves it,
// and the answer is the same; every memory is then in its creator's private space,
// the team space is empty, and the former members see nothing of it.
func TestDissolveTeam(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "dis")
	team := "dis-own-" + w.team
	w.admin.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team, "owner_id": w.owner.requester}, nil)
	writer, reader := w.other, client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: "dis-reader-" + w.agent}
	outsider := client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: "dis-outsider-" + w.agent}
	other := "dis-b-" + w.agent
	writer.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": other}, nil)
	for who, role := range map[string]string{w.owner.requester: "writer", writer.requester: "writer", reader.requester: "reader"} {
		w.admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+who, map[string]any{"role": role}, nil)
	}
	ingest(t, "agent-"+w.agent+"-", "agent-"+other+"-", "team-"+team)
	add := func(as client, agent, text string) string {
		var a added
		as.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": text, "visibility": "team", "team": team}, &a)
		return a.ID
	}
	ids := map[string]string{
		add(w.owner, w.agent, "Erin works at Hooli."):        "agent-" + w.agent + "-private",
		add(w.owner, w.agent, "Erin lives in Oslo."):         "agent-" + w.agent + "-private",
		add(writer, other, "Frank manages the Oslo office."): "agent-" + other + "-private",
	}
	for id := range ids {
		waitStatus(t, w.owner, id)
	}
	var patched string // a memory with an earlier version, which must move with it
	for id := range ids {
		patched = id
	}
	owners := map[string]client{"agent-" + w.agent + "-private": w.owner, "agent-" + other + "-private": writer}
	if s, body := owners[ids[patched]].patch(patched, "", map[string]any{"tags": []string{"kept"}}); s != http.StatusOK {
		t.Fatalf("updating a team memory: %d %s", s, body)
	}
	inTeam := func() int64 {
		return neo4jtest.Count(t, "MATCH (n) WHERE (n:Episodic OR n:Entity OR n:MemoryVersion) AND n.group_id = $g RETURN count(n)",
			map[string]any{"g": "team-" + team})
	}
	if inTeam() <= 3 {
		t.Fatalf("nothing was extracted in the team space")
	}

	path := "/v1/teams/" + team
	for _, c := range []struct {
		name   string
		as     client
		query  string
		status int
	}{
		{"a requester outside the team", outsider, "?dry_run=true", http.StatusNotFound},
		{"a writer that does not own it", writer, "", http.StatusForbidden},
		{"a reader", reader, "?dry_run=true", http.StatusForbidden},
		{"a bad dry_run", w.owner, "?dry_run=maybe", http.StatusBadRequest},
		{"an unknown team", w.admin, "-nosuch", http.StatusNotFound},
	} {
		p := path + c.query
		if c.query == "-nosuch" {
			p = path + "-nosuch"
		}
		do := c.as.do
		if c.status == http.StatusBadRequest {
			do = c.as.sendMalformed
		}
		if s, body := do("DELETE", p, nil); s != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, s, body, c.status)
		}
	}
	var events struct {
		Events []struct{ Kind, Actor string }
	}
	w.admin.must(http.StatusOK, "GET", "/v1/audit?kind=namespace_denied&subject="+team, nil, &events)
	if len(events.Events) != 2 {
		t.Errorf("the refused dissolutions audited: %+v, want the writer's and the reader's", events.Events)
	}

	var dry, real dissolution
	w.owner.must(http.StatusOK, "DELETE", path+"?dry_run=true", nil, &dry)
	reader.must(http.StatusOK, "GET", path, nil, nil) // a dry run changes nothing
	w.owner.must(http.StatusOK, "DELETE", path, nil, &real)
	if !dry.DryRun || real.DryRun || dry.Moved != 3 || real.Moved != 3 || len(real.Creators) != 2 ||
		real.Creators[0] != dry.Creators[0] || real.Creators[1] != dry.Creators[1] || real.Erased != 0 {
		t.Fatalf("dry run %+v and dissolution %+v disagree or miscount", dry, real)
	}

	if n := inTeam(); n != 0 {
		t.Errorf("%d nodes are left in the team space", n)
	}
	if n := neo4jtest.Count(t, "MATCH (v:MemoryVersion {episode_uuid: $id, group_id: $g}) RETURN count(v)",
		map[string]any{"id": patched, "g": ids[patched]}); n != 1 {
		t.Errorf("the updated memory's earlier version: %d in %s, want 1", n, ids[patched])
	}
	for id, group := range ids {
		var m memory
		owners[group].must(http.StatusOK, "GET", "/v1/memories/"+id, nil, &m)
		if m.GroupID != group {
			t.Errorf("memory %s is in %s, want its creator's %s", id, m.GroupID, group)
		}
		waitStatus(t, owners[group], id)
		for _, former := range []client{reader, w.other, w.owner} {
			if owners[group] == former {
				continue
			}
			if s, _ := former.do("GET", "/v1/memories/"+id, nil); s != http.StatusNotFound {
				t.Errorf("former member %s reads moved memory %s: %d", former.requester, id, s)
			}
		}
	}
	for _, former := range []client{reader, writer} {
		if s, _ := former.do("GET", path, nil); s != http.StatusNotFound {
			t.Errorf("former member %s still sees the team: %d", former.requester, s)
		}
		if s, _ := former.do("GET", "/v1/memories?space=team:"+team, nil); s != http.StatusNotFound {
			t.Errorf("former member %s still lists the team space: %d", former.requester, s)
		}
	}
	if s, _ := writer.do("POST", "/v1/memories", map[string]any{"agent_id": other, "messages": "late", "visibility": "team", "team": team}); s != http.StatusForbidden {
		t.Errorf("a write to the dissolved team: %d, want 403", s)
	}
	w.admin.must(http.StatusOK, "GET", "/v1/audit?kind=team_dissolved&subject="+team, nil, &events)
	if len(events.Events) != 1 || events.Events[0].Actor != w.owner.requester {
		t.Errorf("the dissolution audited: %+v", events.Events)
	}

	// An admin host dissolves a team it does not own, here one with no memories.
	var empty dissolution
	w.admin.must(http.StatusOK, "DELETE", "/v1/teams/"+w.team, nil, &empty)
	if empty.Moved != 0 || len(empty.Creators) != 0 {
		t.Errorf("dissolving an empty team: %+v", empty)
	}
	if s, _ := w.owner.do("GET", "/v1/teams/"+w.team, nil); s != http.StatusNotFound {
		t.Errorf("the empty team is still there for its former member: %d", s)
	}
}
