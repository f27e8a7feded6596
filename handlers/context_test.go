package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

type turnContext struct {
	Context   string   `json:"context"`
	Tokens    int      `json:"tokens"`
	Tokenizer string   `json:"tokenizer"`
	Facts     []string `json:"facts"`
	Entities  []string `json:"entities"`
	Episodes  []string `json:"episodes"`
}

// The context of a turn over REST and MCP: the facts that hold with their time in
// words, the entities they name, the memories with tool output left out (and kept in
// the memory), as_of for the past (facts that held then, memories said by then, no
// entity summary); nothing of another owner's private memory, and
// for another requester only what it may see of the agent.
func TestContext(t *testing.T) {
	t.Parallel()
	owner, other, agent := aliceWorld(t)
	var tool added
	owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": []map[string]any{
		{"role": "user", "content": "What is the weather in Lisbon for Alice?"},
		{"role": "tool", "content": `{"forecast": "sunny", "probe": "toolpayloadword"}`},
		{"role": "assistant", "content": "Alice will have sun in Lisbon."}}}, &tool)
	waitStatus(t, owner, tool.ID)
	// The decoy: another owner's agent holds a private memory with a word no one else has.
	decoy := "decoy-" + randomSuffix()
	decoyAgent := agent + "-decoy"
	other.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": decoyAgent}, nil)
	ingest(t, "agent-"+decoyAgent+"-")
	var d added
	other.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": decoyAgent,
		"messages": "Alice works at " + decoy + " and lives in Lisbon."}, &d)
	waitStatus(t, other, d.ID)

	ask := func(c client, body map[string]any) turnContext {
		t.Helper()
		var tc turnContext
		c.must(http.StatusOK, "POST", "/v1/agents/"+agent+"/context", body, &tc)
		if strings.Contains(tc.Context, decoy) {
			t.Fatalf("another owner's private word in the context:\n%s", tc.Context)
		}
		return tc
	}
	now := ask(owner, map[string]any{"messages": []map[string]any{
		{"role": "user", "content": "Where does Alice work, and what is the weather in Lisbon?"},
		{"role": "tool", "content": "Acme Acme Acme"}}})
	t.Logf("context (%d tokens):\n%s", now.Tokens, now.Context)
	facts, _, _ := strings.Cut(now.Context, "\n\n")
	for _, want := range []string{"joined Globex (since March 2024)", "Relevant memories:",
		"- 10 January 2022: Alice works at Acme as an engineer.",
		fmt.Sprintf("tool: [tool output, %d bytes, left out]", len(`{"forecast": "sunny", "probe": "toolpayloadword"}`))} {
		if !strings.Contains(now.Context, want) {
			t.Errorf("the context lacks %q:\n%s", want, now.Context)
		}
	}
	if strings.Contains(now.Context, "toolpayloadword") || strings.Contains(facts, "works at Acme") {
		t.Errorf("tool output, or as a fact one that no longer holds, in the context:\n%s", now.Context)
	}
	if now.Tokenizer != "o200k_base" || now.Tokens == 0 || len(now.Facts) == 0 || len(now.Episodes) == 0 {
		t.Errorf("context %+v", now)
	}
	var stored struct{ Content string }
	owner.must(http.StatusOK, "GET", "/v1/memories/"+tool.ID, nil, &stored)
	if !strings.Contains(stored.Content, "toolpayloadword") {
		t.Errorf("the stored memory lost its tool output: %q", stored.Content)
	}
	for _, id := range now.Facts {
		owner.must(http.StatusOK, "GET", "/v1/facts/"+id, nil, nil)
	}

	// MCP's get_context is the same block.
	var viaMCP turnContext
	session := mcpSession(t, owner.base, owner.key, owner.requester)
	if !callTool(t, session, "get_context", map[string]any{"agent_id": agent, "messages": []map[string]any{
		{"role": "user", "content": "Where does Alice work, and what is the weather in Lisbon?"},
		{"role": "tool", "content": "Acme Acme Acme"}}}, &viaMCP) || viaMCP.Context != now.Context {
		t.Errorf("get_context over MCP:\n%s\nwant the REST block:\n%s", viaMCP.Context, now.Context)
	}

	then := ask(owner, map[string]any{"query": "Where does Alice work?", "as_of": "2023-06-01T00:00:00Z"})
	facts, _, _ = strings.Cut(then.Context, "\n\n")
	if !strings.Contains(facts, "Facts as of 1 June 2023:\n- Alice works at Acme as an engineer (start unknown, until March 2024)") || strings.Contains(facts, "joined Globex") {
		t.Errorf("as_of 2023: the Acme fact, ended in March 2024, and not Globex:\n%s", then.Context)
	}
	if !strings.Contains(then.Context, "10 January 2022: Alice works at Acme") || strings.Contains(then.Context, "joined Globex") {
		t.Errorf("as_of 2023: the memory said in 2022, and none said after June 2023:\n%s", then.Context)
	}
	small := ask(owner, map[string]any{"query": "Where does Alice work?", "max_tokens": 12})
	if small.Tokens > 12 {
		t.Errorf("max_tokens 12: %d tokens", small.Tokens)
	}
	if again := ask(owner, map[string]any{"query": "Where does Alice work?", "as_of": "2023-06-01T00:00:00Z"}); again.Context != then.Context {
		t.Errorf("the same graph gave two contexts:\n%s\n---\n%s", then.Context, again.Context)
	}

	// Another requester sees none of the owner's private memory of the agent; an agent
	// that does not exist is 404; bad requests are 400 in the one error shape.
	if seen := ask(other, map[string]any{"query": "Where does Alice work?"}); seen.Context != "" || len(seen.Facts)+len(seen.Entities)+len(seen.Episodes) != 0 {
		t.Errorf("another requester's context of the agent: %+v", seen)
	}
	owner.must(http.StatusNotFound, "POST", "/v1/agents/no-such-agent-"+randomSuffix()+"/context", map[string]any{"query": "Alice"}, nil)
	toolOnly := map[string]any{"messages": []map[string]any{{"role": "tool", "content": "Alice Acme Globex"}}}
	if empty := ask(owner, toolOnly); empty.Context != "" || empty.Tokens != 0 || len(empty.Facts) != 0 {
		t.Errorf("a turn of tool output only: %+v; want an empty block", empty)
	}
	owner.must(http.StatusNotFound, "POST", "/v1/agents/no-such-agent-"+randomSuffix()+"/context", toolOnly, nil)
	for _, body := range []map[string]any{
		{}, {"query": "x", "messages": []map[string]any{{"role": "user", "content": "y"}}},
		{"query": "x", "max_tokens": 0.5}, {"query": "x", "max_tokens": 40000}, {"query": "x", "unknown": 1},
		{"messages": []map[string]any{{"role": "robot", "content": "y"}}},
		{"query": "x", "scopes": []string{"agent:someone"}},
	} {
		if status, out := owner.sendMalformed("POST", "/v1/agents/"+agent+"/context", body); status != http.StatusBadRequest ||
			!strings.Contains(string(out), `"code":"invalid"`) {
			t.Errorf("context %v: %d %s; want 400 invalid", body, status, out)
		}
	}
	neo4jtest.Forget(t, decoyAgent)
}
