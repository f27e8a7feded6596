package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestInjection_EveryRoute sends the injection corpus in every string of every route
// that takes one — path ids, query parameters, body fields, the requester and
// idempotency headers, and every MCP tool argument — as an owner and as an admin:
// never a 5xx, and another requester's spaces are neither changed nor named.
func TestInjection_EveryRoute(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	suffix := randomSuffix()
	neo4jtest.Forget(t, suffix)
	// A payload that names something the route stores (an agent, an owner, a grantee,
	// a team, a promoter) carries the test's mark, so what a valid one creates (a team
	// "global-<mark>") is erased with the rest; the hostile text is still sent whole.
	marked := func(p string) string { return p + "-" + suffix }
	victim := client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: "victim-" + suffix}
	owner := client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: "attacker-" + suffix}
	root := client{t: t, base: srv.URL, key: matrixKeys["admin"], requester: "root-" + suffix}
	victimAgent, agent := "victim-"+suffix, "attacker-"+suffix
	victim.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": victimAgent}, nil)
	owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	var secret added
	victim.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": victimAgent, "messages": "The victim's secret."}, &secret)
	var mine added
	owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "Mine."}, &mine)

	census := func() [2]int64 {
		n, r := neo4jtest.Census(t, "agent-"+victimAgent+"-")
		return [2]int64{n, r}
	}
	before := census()
	private := "agent-" + victimAgent + "-private"

	type call struct {
		who          client
		method, path string
		body         map[string]any
		header       map[string]string
	}
	// Each template is a request with one string replaced by the payload p.
	templates := []func(p string) call{
		func(p string) call {
			return call{owner, "POST", "/v1/memories", map[string]any{"agent_id": p, "messages": "x"}, nil}
		},
		func(p string) call {
			return call{owner, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": p}, nil}
		},
		func(p string) call {
			return call{owner, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "x", "visibility": p, "team": p}, nil}
		},
		func(p string) call {
			return call{owner, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "x", "source": p,
				"source_description": p, "priority": p, "tags": []string{p}, "metadata": map[string]any{p: p}}, nil}
		},
		func(p string) call {
			return call{owner, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "x"}, map[string]string{"Idempotency-Key": p}}
		},
		func(p string) call {
			return call{owner, "POST", "/v1/memories/batch", map[string]any{"items": []any{map[string]any{"agent_id": p, "messages": p}}}, nil}
		},
		func(p string) call {
			return call{owner, "GET", "/v1/memories?" + url.Values{"agent_id": {p}, "space": {p}, "cursor": {p}}.Encode(), nil, nil}
		},
		func(p string) call { return call{owner, "GET", "/v1/memories/" + url.PathEscape(p), nil, nil} },
		func(p string) call { return call{owner, "DELETE", "/v1/memories/" + url.PathEscape(p), nil, nil} },
		func(p string) call {
			return call{owner, "POST", "/v1/memories/" + url.PathEscape(p) + "/promote", map[string]any{"target": "global"}, nil}
		},
		func(p string) call {
			return call{owner, "POST", "/v1/memories/" + mine.ID + "/promote", map[string]any{"target": p}, nil}
		},
		func(p string) call {
			return call{owner, "POST", "/v1/memories/" + url.PathEscape(p) + "/retry", nil, nil}
		},
		func(p string) call {
			return call{owner, "GET", "/v1/facts?" + url.Values{"agent_id": {p}, "cursor": {p}}.Encode(), nil, nil}
		},
		func(p string) call { return call{owner, "GET", "/v1/facts/" + url.PathEscape(p), nil, nil} },
		func(p string) call { return call{owner, "GET", "/v1/entities/" + url.PathEscape(p), nil, nil} },
		func(p string) call {
			return call{owner, "POST", "/v1/agents", map[string]any{"id": marked(p), "owner_id": marked(p)}, nil}
		},
		func(p string) call { return call{owner, "GET", "/v1/agents/" + url.PathEscape(p), nil, nil} },
		func(p string) call { return call{owner, "DELETE", "/v1/agents/" + url.PathEscape(p), nil, nil} },
		func(p string) call {
			return call{owner, "PUT", "/v1/agents/" + agent + "/owner", map[string]any{"owner_id": marked(p)}, nil}
		},
		func(p string) call {
			return call{owner, "PUT", "/v1/agents/" + agent + "/shares/" + url.PathEscape(marked(p)), nil, nil}
		},
		func(p string) call { return call{root, "POST", "/v1/teams", map[string]any{"name": marked(p)}, nil} },
		func(p string) call { return call{root, "GET", "/v1/teams/" + url.PathEscape(p), nil, nil} },
		func(p string) call {
			return call{root, "PUT", "/v1/teams/" + url.PathEscape(marked(p)) + "/members/" + url.PathEscape(marked(p)), map[string]any{"role": p}, nil}
		},
		func(p string) call { return call{root, "PUT", "/v1/promoters/" + url.PathEscape(marked(p)), nil, nil} },
		func(p string) call {
			return call{root, "GET", "/v1/audit?" + url.Values{"kind": {p}, "actor": {p}, "subject": {p}, "since": {p},
				"until": {p}, "cursor": {p}}.Encode(), nil, nil}
		},
		func(p string) call {
			return call{client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: p}, "GET", "/v1/memories?agent_id=" + agent, nil, nil}
		},
	}
	codes := map[int]int{}
	for _, payload := range injection {
		for i, template := range templates {
			c := template(payload)
			if strings.ContainsAny(c.who.requester, "\x00\n\t") || strings.ContainsAny(c.header["Idempotency-Key"], "\x00\n\t") {
				continue // not a valid header value: the HTTP client refuses to send it
			}
			header := map[string]string{"Authorization": "Bearer " + c.who.key, "X-Requester-Id": c.who.requester,
				"Content-Type": "application/json"}
			for k, v := range c.header {
				header[k] = v
			}
			var body string
			if c.body != nil {
				body = mustJSON(t, c.body)
			}
			resp, out := doMalformed(t, c.method, srv.URL+c.path, header, body) // hostile on purpose
			codes[resp.StatusCode]++
			if resp.StatusCode >= 500 {
				t.Errorf("template %d %s %.60s with %.40q: %d %s", i, c.method, c.path, payload, resp.StatusCode, out)
			}
			if strings.Contains(string(out), private) || strings.Contains(string(out), secret.ID) {
				t.Errorf("template %d with %.40q named the victim's private memory: %.200s", i, payload, out)
			}
		}
	}

	// MCP: every string argument of every tool.
	s := mcpSession(t, srv.URL, matrixKeys["trusted"], owner.requester)
	tools := map[string][]string{
		"add_memory": {"agent_id", "content", "visibility", "team", "idempotency_key"}, "search_memory": {"agent_id", "query"},
		"get_memory": {"id"}, "get_status": {"id"}, "delete_memory": {"id"}, "list_memories": {"agent_id", "space", "cursor"},
	}
	for tool, fields := range tools {
		for _, field := range fields {
			for _, payload := range injection {
				args := map[string]any{"agent_id": agent, "content": "x", "query": "x", "id": mine.ID, field: payload}
				res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
				if err != nil {
					continue // refused by the SDK as a protocol error, not a crash
				}
				text := res.Content[0].(*mcp.TextContent).Text
				if strings.Contains(text, `"code":"internal"`) || strings.Contains(text, private) || strings.Contains(text, secret.ID) {
					t.Errorf("MCP %s %s = %.40q: %.200s", tool, field, payload, text)
				}
			}
		}
	}
	if after := census(); after != before {
		t.Errorf("the victim's spaces changed: census %v before, %v after", before, after)
	}
	victim.must(http.StatusOK, "GET", "/v1/memories/"+secret.ID, nil, nil)
	t.Logf("%d payloads x %d REST templates: answers %v", len(injection), len(templates), codes)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
