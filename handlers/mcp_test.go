package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/handlers"
)

// withHeaders sends every request with the host key and requester of one MCP client,
// through the contract check of openapi.json.
type withHeaders struct {
	header map[string]string
	next   http.RoundTripper
}

func (h withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.header {
		if v != "" { // no X-Requester-Id for a JWT user
			r.Header.Set(k, v)
		}
	}
	return h.next.RoundTrip(r)
}

// mcpSession connects the SDK's own client to /mcp as requester through key.
func mcpSession(t *testing.T, base, key, requester string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "memgate-test", Version: "test"}, nil)
	s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: withHeaders{
			header: map[string]string{"Authorization": "Bearer " + key, "X-Requester-Id": requester},
			next:   newContract(t, false)}}}, nil)
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
	neo4jtest.Forget(t, suffix)
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
	if got := strings.Join(names, " "); got != "add_fact add_memory compact_memories delete_memory get_context get_memory get_status list_conflicts list_entities list_memories reflect resolve_conflict search_memory update_memory" {
		t.Errorf("tools: %s", got)
	}

	var added struct {
		ID string `json:"id"`
	}
	if !callTool(t, owner, "add_memory", map[string]any{"agent_id": agent, "content": "Alice works at Acme as an engineer."}, &added) {
		t.Fatalf("add_memory failed: %+v", added)
	}
	for deadline, wait := time.Now().Add(time.Minute), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
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

	// update_memory: a new version, a stale one refused, another requester's not found.
	var updated struct {
		Version int      `json:"version"`
		Tags    []string `json:"tags"`
	}
	if !callTool(t, owner, "update_memory", map[string]any{"id": added.ID, "tags": []string{"job"}, "if_version": 1}, &updated) ||
		updated.Version != 2 || len(updated.Tags) != 1 {
		t.Errorf("update_memory: %+v", updated)
	}
	if callTool(t, owner, "update_memory", map[string]any{"id": added.ID, "tags": []string{"x"}, "if_version": 1}, &denied) ||
		denied.Error.Code != "precondition_failed" {
		t.Errorf("update_memory from a stale version: %+v, want precondition_failed", denied)
	}
	if callTool(t, other, "update_memory", map[string]any{"id": added.ID, "content": "Alice works at Initech."}, &denied) ||
		denied.Error.Code != "not_found" {
		t.Errorf("another requester's update_memory: %+v, want not_found", denied)
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
	resp, body := doMalformed(t, "POST", srv.URL+"/mcp", map[string]string{"Authorization": "Bearer " + matrixKeys["trusted"],
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("MCP without X-Requester-Id: %d %s, want 400", resp.StatusCode, body)
	}
}

// TestMCP_ToolErrors: a mistake in a tool's arguments is a tool error whose text is
// the error body REST gives for the same mistake in a body (code, message, a request
// id), never the decoder's or the schema validator's text, and never the bad value.
func TestMCP_ToolErrors(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	suffix := randomSuffix()
	neo4jtest.Forget(t, suffix)
	requester, agent := "mcp-errors-"+suffix, "mcp-errors-"+suffix
	rest := client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: requester}
	rest.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	s := mcpSession(t, srv.URL, matrixKeys["trusted"], requester)

	// What the MCP transport would refuse in plain text is refused in the one error
	// shape: another method than POST (the server is stateless), a body that is not
	// JSON, an Accept without both JSON and an event stream.
	headers := func(contentType, accept string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + matrixKeys["trusted"], "X-Requester-Id": requester,
			"Content-Type": contentType, "Accept": accept}
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, method := range []string{"GET", "DELETE"} {
		resp, body := doMalformed(t, method, srv.URL+"/mcp", headers("application/json", "text/event-stream"), "")
		mustErrorBody(t, resp, body, http.StatusMethodNotAllowed, "invalid")
	}
	resp, body := doMalformed(t, "POST", srv.URL+"/mcp", headers("text/plain", "application/json, text/event-stream"), list)
	mustErrorBody(t, resp, body, http.StatusBadRequest, "invalid")
	resp, body = do(t, "POST", srv.URL+"/mcp", headers("application/json", "application/json"), list)
	mustErrorBody(t, resp, body, http.StatusBadRequest, "invalid")
	// A JSON-RPC batch would be one request against the rate limit however many calls
	// it holds (security finding 3): refused, whatever it holds, and none of it runs.
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add_memory","arguments":{"agent_id":"` +
		agent + `","content":"batched ` + suffix + `"}}}`
	for _, batch := range []string{"[" + fmt.Sprintf(call, 1) + "," + fmt.Sprintf(call, 2) + "]", " \n[" + fmt.Sprintf(call, 3) + "]", "[]"} {
		resp, body = doMalformed(t, "POST", srv.URL+"/mcp", headers("application/json", "application/json, text/event-stream"), batch)
		e := mustErrorBody(t, resp, body, http.StatusBadRequest, "invalid")
		if !strings.Contains(e.Error.Message, "batch") {
			t.Errorf("a batch refused with %q, which does not say why", e.Error.Message)
		}
	}
	var stored struct{ Items []memory }
	rest.must(http.StatusOK, "GET", "/v1/memories?agent_id="+agent, nil, &stored)
	if len(stored.Items) != 0 {
		t.Fatalf("a refused batch stored %d memories", len(stored.Items))
	}

	const bad = "bad-value-zq9" // in each mistake, where one holds a value
	for _, c := range []struct {
		name, tool, route string
		mistake           map[string]any
		want              string // the message REST and MCP both give
	}{
		{"BadAsOf", "search_memory", "/v1/memories/search", map[string]any{"as_of": bad},
			"the body has a malformed value (timestamps are RFC 3339, e.g. 2024-03-01T12:00:00Z)"},
		{"LimitNotANumber", "search_memory", "/v1/memories/search", map[string]any{"limit": bad},
			"field limit must be a whole number"},
		{"LimitFraction", "search_memory", "/v1/memories/search", map[string]any{"limit": 2.5},
			"field limit must be a whole number"},
		{"LimitNegative", "search_memory", "/v1/memories/search", map[string]any{"limit": -1},
			"limit must not be negative"},
		{"UnknownField", "search_memory", "/v1/memories/search", map[string]any{"group_id": bad},
			`unknown field "group_id"`},
		{"WrongType", "search_memory", "/v1/memories/search", map[string]any{"include": bad},
			"field include must be a list"},
		{"AgentNotAString", "search_memory", "/v1/memories/search", map[string]any{"agent_id": 42},
			"field agent_id must be a string"},
		{"AddBadTime", "add_memory", "/v1/memories", map[string]any{"reference_time": bad},
			"the body has a malformed value (timestamps are RFC 3339, e.g. 2024-03-01T12:00:00Z)"},
		{"AddUnknownField", "add_memory", "/v1/memories", map[string]any{"status": bad},
			`unknown field "status"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The same mistake in the REST body, where the tool and the route share
			// the field's name (add_memory's content is REST's messages).
			args := map[string]any{"agent_id": agent, "query": "alice"}
			body := map[string]any{"agent_id": agent, "query": "alice"}
			if c.tool == "add_memory" {
				args = map[string]any{"agent_id": agent, "content": "a note"}
				body = map[string]any{"agent_id": agent, "messages": "a note"}
			}
			for k, v := range c.mistake {
				args[k], body[k] = v, v
			}
			status, out := rest.sendMalformed("POST", c.route, body)
			var restErr handlers.ErrorBody
			if err := json.Unmarshal(out, &restErr); err != nil || status != http.StatusBadRequest {
				t.Fatalf("REST: %d %s", status, out)
			}

			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s: %v, want a tool error", c.tool, err)
			}
			if !res.IsError || len(res.Content) != 1 {
				t.Fatalf("%s: %+v, want one tool error", c.tool, res)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			var got handlers.ErrorBody
			dec := json.NewDecoder(strings.NewReader(text))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("the tool error %s is not the REST error body: %v", text, err)
			}
			if got.Error.Code != "invalid" || got.Error.Message != c.want || got.Error.RequestID == "" {
				t.Errorf("MCP error %+v, want code invalid, message %q and a request id", got.Error, c.want)
			}
			if got.Error.Code != restErr.Error.Code || got.Error.Message != restErr.Error.Message {
				t.Errorf("MCP error %+v, REST error %+v: want the same code and message", got.Error, restErr.Error)
			}
			if strings.Contains(text, bad) || strings.Contains(text, "validating") || strings.Contains(text, "json:") {
				t.Errorf("the tool error echoes the arguments or the decoder: %s", text)
			}
		})
	}
}
