package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestMassAssignment sends, on every route that takes a body, the fields a client must
// never set (a group_id, an owner, a status, provenance, ids, timestamps, and an
// agent_id that disagrees with the path): each is refused as an unknown field with
// 400, and nothing is stored. Over MCP the tools' schemas refuse them the same way.
func TestMassAssignment(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	suffix := randomSuffix()
	neo4jtest.Forget(t, suffix)
	owner := client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: "ma-owner-" + suffix}
	root := client{t: t, base: srv.URL, key: matrixKeys["admin"], requester: "ma-root-" + suffix}
	agent, team := "ma-agent-"+suffix, "ma-team-"+suffix
	owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	root.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
	var a added
	owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "A memory to promote."}, &a)

	forged := map[string]any{
		"group_id": "agent-someone-else-private", "owner": "mallory", "status": "done", "promoted_from": a.ID,
		"promoted_by": "mallory", "created_by": "mallory", "created_at": "2020-01-01T00:00:00Z", "uuid": a.ID,
		"attempts": 0, "lease_owner": "mallory", "requester_id": "mallory", "host_key": "ops",
	}
	routes := []struct {
		method, path, as string
		body             map[string]any
	}{
		{"POST", "/v1/memories", "owner", map[string]any{"agent_id": agent, "messages": "forged"}},
		{"POST", "/v1/memories/batch", "owner", nil}, // the field in an item refuses the whole batch
		{"POST", "/v1/memories/" + a.ID + "/promote", "owner", map[string]any{"target": "team:" + team}},
		{"POST", "/v1/memories/search", "owner", map[string]any{"agent_id": agent, "query": "memory"}},
		{"POST", "/v1/agents", "owner", map[string]any{"id": agent + "-2"}},
		{"PUT", "/v1/agents/" + agent + "/owner", "owner", map[string]any{"owner_id": "ma-next-" + suffix, "agent_id": "other-agent"}},
		{"POST", "/v1/teams", "root", map[string]any{"name": team + "-2"}},
		{"PUT", "/v1/teams/" + team + "/members/" + owner.requester, "root", map[string]any{"role": "writer", "team": "other-team"}},
	}
	for _, r := range routes {
		for field, value := range forged {
			body := map[string]any{}
			for k, v := range r.body {
				body[k] = v
			}
			body[field] = value
			if r.path == "/v1/memories/batch" {
				body = map[string]any{"items": []any{map[string]any{"agent_id": agent, "messages": "forged", field: value}}}
			}
			c := owner
			if r.as == "root" {
				c = root
			}
			status, out := c.sendMalformed(r.method, r.path, body) // an unknown field, on purpose
			if status != http.StatusBadRequest || !strings.Contains(string(out), "unknown field") {
				t.Errorf("%s %s with %s: %d %s, want 400 unknown field", r.method, r.path, field, status, out)
			}
		}
	}
	// Nothing was stored: one memory, the same owner, no second agent or team.
	if n := countEpisodes(t, owner, agent); n != 1 {
		t.Errorf("the agent has %d memories, want the one written before", n)
	}
	var ag struct {
		OwnerID string `json:"owner_id"`
	}
	owner.must(http.StatusOK, "GET", "/v1/agents/"+agent, nil, &ag)
	if ag.OwnerID != owner.requester {
		t.Errorf("the agent's owner is %q", ag.OwnerID)
	}
	if status, _ := owner.do("GET", "/v1/agents/"+agent+"-2", nil); status != http.StatusNotFound {
		t.Errorf("a forged create made agent %s-2: %d", agent, status)
	}
	if status, _ := root.do("GET", "/v1/teams/"+team+"-2", nil); status != http.StatusNotFound {
		t.Errorf("a forged create made team %s-2: %d", team, status)
	}

	// MCP: the input schemas refuse unknown properties.
	s := mcpSession(t, srv.URL, matrixKeys["trusted"], owner.requester)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_memory",
		Arguments: map[string]any{"agent_id": agent, "content": "forged", "group_id": "agent-someone-else-private"}})
	if err == nil && !res.IsError {
		t.Errorf("add_memory with a group_id was accepted: %+v", res.Content)
	}
	if n := countEpisodes(t, owner, agent); n != 1 {
		t.Errorf("after MCP the agent has %d memories, want 1", n)
	}
}
