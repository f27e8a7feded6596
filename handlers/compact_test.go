package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

type compacted struct {
	ID                string   `json:"id"`
	GroupID           string   `json:"group_id"`
	Status            string   `json:"status"`
	Content           string   `json:"content"`
	SourceDescription string   `json:"source_description"`
	DerivedFrom       []string `json:"derived_from"`
}

// decoyWorld is an owner's agent and another requester's agent, created just after
// start.
func decoyWorld(t *testing.T) (owner, other client, agent, otherAgent string, start time.Time) {
	t.Helper()
	owner, other, agent = ownerWorld(t)
	otherAgent = agent + "-other"
	other.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": otherAgent}, nil)
	return owner, other, agent, otherAgent, time.Now().UTC().Add(-time.Second)
}

type auditEvent struct {
	Actor, Space, Reason string
}

// audited lists the audit events of kind about subject, read by an admin host.
func audited(c client, kind, subject string) []auditEvent {
	root := client{t: c.t, base: c.base, key: matrixKeys["admin"], requester: "root-auditor"}
	var page struct{ Events []auditEvent }
	root.must(http.StatusOK, "GET", "/v1/audit?kind="+kind+"&subject="+subject, nil, &page)
	return page.Events
}

// TestCompact: the owner compacts its agent's memories, named or since a time, into a
// memory of the agent's private space within max_tokens (as bytes), with provenance;
// a decoy in another owner's agent never reaches a summary, and naming it is a 404.
// Another requester, who sees the agent's public memories, may not compact (403,
// audited); a ghost agent is 404; bad bounds are 400.
func TestCompact(t *testing.T) {
	t.Parallel()
	owner, other, agent, otherAgent, start := decoyWorld(t)
	var ids []string
	for _, m := range []struct{ text, visibility string }{
		{"Priya Natarajan (user): I'm a data engineer at Halvorsen Logistics in Oslo.", "private"},
		{"Priya Natarajan (user): My manager is Erik Lund.\nassistant: Noted, thanks!", "private"},
		{"Priya Natarajan (user): As of June 2025 I work at Nordvik Energy.", "public"},
	} {
		var a added
		owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": m.text,
			"visibility": m.visibility}, &a)
		ids = append(ids, a.ID)
	}
	const decoy = "Xylophant42Decoy"
	var d added
	other.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": otherAgent,
		"messages": "The vault code word is " + decoy + "."}, &d)

	var all compacted
	owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": agent,
		"since": start.Format(time.RFC3339Nano), "max_tokens": 200}, &all)
	if all.GroupID != "agent-"+agent+"-private" || all.SourceDescription != "compaction" || all.Status != "queued" ||
		len(all.DerivedFrom) != 3 || len(all.Content) > 200 || all.Content == "" {
		t.Errorf("compaction since the start: %+v, want a queued private memory of at most 200 bytes from the 3 memories", all)
	}
	for _, want := range []string{"Halvorsen Logistics", "Erik Lund", "Nordvik Energy"} {
		if !strings.Contains(all.Content, want) {
			t.Errorf("the summary %q lacks %q", all.Content, want)
		}
	}
	if strings.Contains(all.Content, "Noted, thanks") || strings.Contains(all.Content, decoy) {
		t.Errorf("the summary %q holds an assistant's line or the decoy", all.Content)
	}
	var stored compacted
	owner.must(http.StatusOK, "GET", "/v1/memories/"+all.ID, nil, &stored)
	if stored.Content != all.Content || strings.Join(stored.DerivedFrom, ",") != strings.Join(all.DerivedFrom, ",") {
		t.Errorf("stored %+v, answered %+v", stored, all)
	}

	var named compacted
	owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": agent,
		"episode_ids": ids[:2], "max_tokens": 16}, &named)
	if len(named.Content) > 16 || strings.Join(named.DerivedFrom, ",") != strings.Join(ids[:2], ",") {
		t.Errorf("compaction of two named memories in 16 tokens: %+v", named)
	}

	// What the owner may not use: the decoy, an id that names nothing, the other agent's
	// memory through this agent.
	for _, id := range []string{d.ID, "00000000-0000-4000-8000-000000000000", "not-a-uuid"} {
		status, body := owner.do("POST", "/v1/memories/compact", map[string]any{"agent_id": agent, "episode_ids": []string{ids[0], id}})
		if status != http.StatusNotFound || strings.Contains(string(body), decoy) {
			t.Errorf("compacting with %s: %d %s, want 404", id, status, body)
		}
	}
	// Who may not compact: another requester (it reads the agent's public memory; the
	// summary would go to the private space), and nobody compacts a ghost.
	other.must(http.StatusForbidden, "POST", "/v1/memories/compact", map[string]any{"agent_id": agent, "episode_ids": ids[2:]}, nil)
	if denied := audited(owner, "namespace_denied", agent); len(denied) != 1 || denied[0].Actor != other.requester ||
		denied[0].Space != "agent-"+agent+"-private" {
		t.Errorf("denials about the agent: %+v, want the other requester's compaction", denied)
	}
	owner.must(http.StatusNotFound, "POST", "/v1/memories/compact", map[string]any{"agent_id": agent + "-ghost", "since": start}, nil)
	for name, body := range map[string]map[string]any{
		"neither ids nor since": {"agent_id": agent},
		"both":                  {"agent_id": agent, "episode_ids": ids[:1], "since": start},
		"max_tokens too small":  {"agent_id": agent, "since": start, "max_tokens": 8},
		"max_tokens too large":  {"agent_id": agent, "since": start, "max_tokens": 100000},
		"no agent":              {"since": start},
		"nothing since":         {"agent_id": agent, "since": time.Now().Add(time.Hour)},
	} {
		if status, out := owner.sendMalformed("POST", "/v1/memories/compact", body); status != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", name, status, out)
		}
	}

	// MCP: the same use case.
	session := mcpSession(t, owner.base, matrixKeys["trusted"], owner.requester)
	var viaMCP compacted
	if !callTool(t, session, "compact_memories", map[string]any{"agent_id": agent, "episode_ids": ids[2:], "max_tokens": 64}, &viaMCP) ||
		!strings.Contains(viaMCP.Content, "Nordvik Energy") || len(viaMCP.Content) > 64 {
		t.Errorf("compact_memories: %+v", viaMCP)
	}
}

// TestCompact_OnlyTheAgentsMemories: naming another agent's memory the requester reads
// through a team is 404, so the team's words never land in this agent's private space
// (where they would outlive the requester's membership); the agent's own team memory
// may be compacted, and its summary lands in the team's space, no more visible than
// it; with a private memory beside it, it is refused (403): the two lie apart.
func TestCompact_OnlyTheAgentsMemories(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t, newServer(t, matrixKeyring()).URL, "cmp")
	otherAgent := w.agent + "-other"
	w.other.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": otherAgent}, nil)
	w.admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+w.team+"/members/"+w.other.requester, map[string]any{"role": "writer"}, nil)
	var theirs, mine added
	w.other.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": otherAgent, "visibility": "team",
		"team": w.team, "messages": "The team's code word is Quokka77."}, &theirs)
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "visibility": "team",
		"team": w.team, "messages": "Release on Friday."}, &mine)
	w.owner.must(http.StatusOK, "GET", "/v1/memories/"+theirs.ID, nil, nil) // the owner reads it, as a team member
	status, body := w.owner.do("POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "episode_ids": []string{mine.ID, theirs.ID}})
	if status != http.StatusNotFound || strings.Contains(string(body), "Quokka77") {
		t.Errorf("compacting another agent's team memory into this agent: %d %s, want 404", status, body)
	}
	var own compacted
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "episode_ids": []string{mine.ID}}, &own)
	if strings.Join(own.DerivedFrom, ",") != mine.ID || own.GroupID != "team-"+w.team {
		t.Errorf("compaction of the agent's own team memory: %+v, want it in the team's space", own)
	}
	var private added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "A private note."}, &private)
	if status, body := w.owner.do("POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent,
		"episode_ids": []string{private.ID, mine.ID}}); status != http.StatusForbidden {
		t.Errorf("compacting a private and a team memory together: %d %s, want 403", status, body)
	}
	// Since a time: the agent's private and public spaces alone.
	var since compacted
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent,
		"since": time.Now().Add(-time.Hour).Format(time.RFC3339)}, &since)
	if since.GroupID != "agent-"+w.agent+"-private" || strings.Contains(since.Content, "Release on Friday") || !strings.Contains(since.Content, "A private note") {
		t.Errorf("compaction since a time: %+v, want the private note alone, in the private space", since)
	}
}
