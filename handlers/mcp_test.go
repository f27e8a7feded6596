package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// withHeaders sends every request with the host key and requester of one MCP client.
type withHeaders map[string]string

func (h withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the SDK's own client to /mcp as requester through key.
func mcpSession(t *testing.T, base, key, requester string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "memgate-test", Version: "test"}, nil)
	s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: withHeaders{"Authorization": "Bearer " + key, "X-Requester-Id": requester}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// callTool calls a tool and decodes its JSON answer; ok is false for a tool error.
func callTool(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any, into any) (ok bool) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content parts", tool, len(res.Content))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if err := json.Unmarshal([]byte(text), into); err != nil {
		t.Fatalf("%s: %v: %s", tool, err, text)
	}
	return !res.IsError
}

type toolError struct {
	Error struct{ Code, Message string } `json:"error"`
}

func TestMCP(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	suffix := randomSuffix()
	ownerID, otherID, agent, team := "mcp-owner-"+suffix, "mcp-other-"+suffix, "mcp-agent-"+suffix, "mcp-team-"+suffix
	rest := client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: ownerID}
	rest.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	root := client{t: t, base: srv.URL, key: matrixKeys["admin"], requester: "mcp-root-" + suffix}
	root.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
	ingest(t, "agent-"+agent+"-")
	owner := mcpSession(t, srv.URL, matrixKeys["trusted"], ownerID)
	other := mcpSession(t, srv.URL, matrixKeys["trusted"], otherID)

	tools, err := owner.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s has no description or input schema", tool.Name)
		}
	}
	slices.Sort(names)
	if got := strings.Join(names, " "); got != "add_memory delete_memory get_memory get_status list_memories search_memory" {
		t.Errorf("tools: %s", got)
	}

	var added struct {
		ID string `json:"id"`
	}
	if !callTool(t, owner, "add_memory", map[string]any{"agent_id": agent, "content": "Alice works at Acme as an engineer."}, &added) {
		t.Fatalf("add_memory failed: %+v", added)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var st struct{ Status, LastError string }
		callTool(t, owner, "get_status", map[string]any{"id": added.ID}, &st)
		if st.Status == "done" {
			break
		}
		if st.Status == "failed" || time.Now().After(deadline) {
			t.Fatalf("get_status: %s %s", st.Status, st.LastError)
		}
	}
	var found searchResult
	callTool(t, owner, "search_memory", map[string]any{"agent_id": agent, "query": "where does Alice work"}, &found)
	if found.targets() != "Alice WORKS_AT Acme" || len(found.Episodes) != 1 || found.Episodes[0].ID != added.ID {
		t.Errorf("search_memory: facts %q, episodes %+v", found.targets(), found.Episodes)
	}

	// Another requester: the private memory does not exist for it.
	var denied toolError
	if callTool(t, other, "get_memory", map[string]any{"id": added.ID}, &denied) || denied.Error.Code != "not_found" {
		t.Errorf("another requester's get_memory: %+v, want a not_found tool error", denied)
	}
	var nothing searchResult
	callTool(t, other, "search_memory", map[string]any{"agent_id": agent, "query": "Alice Acme engineer"}, &nothing)
	if len(nothing.Facts)+len(nothing.Entities)+len(nothing.Episodes) != 0 {
		t.Errorf("another requester's search_memory found %+v", nothing)
	}
	if callTool(t, other, "delete_memory", map[string]any{"id": added.ID}, &denied) || denied.Error.Code != "not_found" {
		t.Errorf("another requester's delete_memory: %+v, want not_found", denied)
	}

	// Writes over MCP are confined: the owner is no member of the team, and a trusted
	// key over REST is refused, but over MCP the memory lands in the private space.
	if status, _ := rest.do("POST", "/v1/memories", map[string]any{"agent_id": agent, "visibility": "team", "team": team, "messages": "x"}); status != http.StatusForbidden {
		t.Errorf("REST write to a foreign team with a trusted key: %d, want 403", status)
	}
	var confined struct {
		GroupID  string `json:"group_id"`
		Confined bool   `json:"confined"`
	}
	callTool(t, owner, "add_memory", map[string]any{"agent_id": agent, "content": "Team plans.", "visibility": "team", "team": team}, &confined)
	if !confined.Confined || confined.GroupID != "agent-"+agent+"-private" {
		t.Errorf("MCP write to a foreign team: %+v, want confined to the private space", confined)
	}

	// A refusal over MCP is audited like one over REST, with the request's id.
	if callTool(t, other, "add_memory", map[string]any{"agent_id": agent, "content": "Not yours."}, &denied) || denied.Error.Code != "forbidden" {
		t.Errorf("another requester's add_memory: %+v, want a forbidden tool error", denied)
	}
	var audit struct {
		Events []struct {
			Kind      string `json:"kind"`
			RequestID string `json:"request_id"`
		} `json:"events"`
	}
	root.must(http.StatusOK, "GET", "/v1/audit?kind=namespace_denied&actor="+otherID, nil, &audit)
	if len(audit.Events) != 1 || audit.Events[0].RequestID == "" {
		t.Errorf("audit of the MCP refusal: %+v, want one namespace_denied event with a request id", audit.Events)
	}

	var bad toolError
	if callTool(t, owner, "search_memory", map[string]any{"agent_id": agent, "query": "x", "include": []string{"secrets"}}, &bad) || bad.Error.Code != "invalid" {
		t.Errorf("search_memory with a bad include: %+v, want an invalid tool error", bad)
	}
	var gone struct{ Deleted bool }
	if !callTool(t, owner, "delete_memory", map[string]any{"id": added.ID}, &gone) || !gone.Deleted {
		t.Errorf("delete_memory: %+v", gone)
	}
	if callTool(t, owner, "get_memory", map[string]any{"id": added.ID}, &denied) || denied.Error.Code != "not_found" {
		t.Errorf("get_memory after delete: %+v, want not_found", denied)
	}

	// Without a requester the HTTP request is refused before MCP sees it.
	resp, body := do(t, "POST", srv.URL+"/mcp", map[string]string{"Authorization": "Bearer " + matrixKeys["trusted"],
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("MCP without X-Requester-Id: %d %s, want 400", resp.StatusCode, body)
	}
}
