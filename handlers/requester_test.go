package handlers_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A request that names its requester twice (two headers, or two names in one, as a
// proxy that appends the header makes) is refused, on REST and MCP alike: the service
// never picks one of them.
func TestRequester_NamedOnce(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	for _, tc := range []struct {
		path, body string
		names      []string
	}{
		{"/v1/agents", "", []string{"bob", "alice"}},
		{"/v1/memories?agent_id=a", "", []string{"bob, alice"}},
		{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{"bob", "alice"}},
	} {
		method := http.MethodGet
		if tc.body != "" {
			method = http.MethodPost
		}
		req, err := http.NewRequest(method, srv.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+matrixKeys["trusted"])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for _, n := range tc.names {
			req.Header.Add("X-Requester-Id", n)
		}
		resp, err := (&http.Client{Transport: newContract(t, true)}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		mustErrorBody(t, resp, body, http.StatusBadRequest, "invalid")
	}
}

// A request with two Authorization headers is refused (400), on REST and MCP alike,
// whichever of them is a valid key: the service never picks one.
func TestAuthorization_GivenOnce(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	for _, tc := range []struct{ path, body string }{
		{"/v1/agents", ""},
		{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	} {
		for _, keys := range [][]string{{matrixKeys["trusted"], "not-a-key"}, {"not-a-key", matrixKeys["admin"]},
			{matrixKeys["confined"], matrixKeys["admin"]}} {
			method := http.MethodGet
			if tc.body != "" {
				method = http.MethodPost
			}
			req, err := http.NewRequest(method, srv.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				req.Header.Add("Authorization", "Bearer "+k)
			}
			req.Header.Set("X-Requester-Id", "alice")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := (&http.Client{Transport: newContract(t, true)}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			mustErrorBody(t, resp, body, http.StatusBadRequest, "invalid")
		}
	}
}
