package handlers_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/handlers"
)

// TestConsistency_ReadYourWrites: a write that succeeds answers a consistency token,
// and a read through another replica (a second server with a store of its own, as a
// second memgate process has) that sends it back sees the write. Reads and refused
// writes answer none. A token that is malformed, tampered with, too long or sent twice
// is 400 in the one error shape, before the request does anything; so is one sent for
// another requester, or into another organization, than the one it was made for. A
// token shows nothing of the database: no bookmark, no transaction count.
func TestConsistency_ReadYourWrites(t *testing.T) {
	t.Parallel()
	keys := []access.KeySpec{{Name: "app", SHA256: access.HashKey("key-rw"), Trusted: true},
		{Name: "platform", SHA256: access.HashKey("key-rw-platform"), Trusted: true, Admin: true, Platform: true}}
	one, two := newServer(t, keys), newServer(t, keys)
	mark := randomSuffix()
	neo4jtest.Forget(t, mark)
	agent, owner := "agent-rw-"+mark, "owner-rw-"+mark
	as := map[string]string{"Authorization": "Bearer key-rw", "X-Requester-Id": owner, "Content-Type": "application/json"}
	with := func(token string) map[string]string {
		h := map[string]string{handlers.ConsistencyHeader: token}
		for k, v := range as {
			h[k] = v
		}
		return h
	}

	resp, body := do(t, "POST", one.URL+"/v1/agents", as, `{"id":"`+agent+`"}`)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get(handlers.ConsistencyHeader) == "" {
		t.Fatalf("creating the agent: %d, token %q: %s", resp.StatusCode, resp.Header.Get(handlers.ConsistencyHeader), body)
	}
	resp, body = do(t, "POST", one.URL+"/v1/memories", with(resp.Header.Get(handlers.ConsistencyHeader)),
		`{"agent_id":"`+agent+`","messages":"The staging database moved to eu-west-2."}`)
	token := resp.Header.Get(handlers.ConsistencyHeader)
	if resp.StatusCode != http.StatusAccepted || token == "" {
		t.Fatalf("adding a memory: %d, token %q: %s", resp.StatusCode, token, body)
	}
	var added struct{ ID string }
	if err := json.Unmarshal(body, &added); err != nil || added.ID == "" {
		t.Fatalf("adding a memory: %s", body)
	}

	// The other replica, with the token: the memory is there.
	resp, body = do(t, "GET", two.URL+"/v1/memories/"+added.ID, with(token), "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "eu-west-2") {
		t.Fatalf("reading the memory through the other replica with the token: %d %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get(handlers.ConsistencyHeader); got != "" {
		t.Errorf("a read answered a token: %q", got)
	}
	// A write refused answers no token: nothing was written.
	resp, body = do(t, "POST", two.URL+"/v1/memories", map[string]string{"Authorization": "Bearer key-rw",
		"X-Requester-Id": "stranger-rw-" + mark, "Content-Type": "application/json"},
		`{"agent_id":"`+agent+`","messages":"not theirs"}`)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(handlers.ConsistencyHeader) != "" {
		t.Errorf("a refused write: %d, token %q: %s", resp.StatusCode, resp.Header.Get(handlers.ConsistencyHeader), body)
	}

	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) <= 28 {
		t.Fatalf("the token is not base64url of a nonce and a sealed payload: %q", token)
	}
	if strings.Contains(string(raw), "FB:") {
		t.Errorf("the token shows its bookmarks: %q", raw)
	}
	tampered := append([]byte{}, raw...)
	tampered[len(tampered)-3] ^= 1 // the sealed bookmarks changed
	renonced := append([]byte{}, raw...)
	renonced[0] ^= 1 // another nonce
	refused := map[string][]string{
		"not base64":         {"%%%"},
		"too short":          {base64.RawURLEncoding.EncodeToString(raw[:16])},
		"bookmarks tampered": {base64.RawURLEncoding.EncodeToString(tampered)},
		"another nonce":      {base64.RawURLEncoding.EncodeToString(renonced)},
		"unsigned bookmarks": {base64.RawURLEncoding.EncodeToString([]byte(`["FB:kcwQuxCWgOakTaqwOrgohquvdcp/////kA=="]`))},
		"too long":           {strings.Repeat("A", 4096)},
		"sent twice":         {token, token},
		"empty":              {""},
	}
	for name, sent := range refused {
		t.Run(name, func(t *testing.T) {
			for _, method := range []string{"GET", "POST"} {
				req, _ := http.NewRequest(method, two.URL+"/v1/memories?agent_id="+agent, strings.NewReader(
					`{"agent_id":"`+agent+`","messages":"must not be stored"}`))
				for k, v := range as {
					req.Header.Set(k, v)
				}
				for _, v := range sent {
					req.Header.Add(handlers.ConsistencyHeader, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				mustErrorBody(t, resp, body, http.StatusBadRequest, "invalid")
			}
		})
	}
	// Made for the owner in the implicit organization: refused for another requester of
	// the same key, and for the owner's id in another organization.
	for name, h := range map[string]map[string]string{
		"another requester":    {"Authorization": "Bearer key-rw", "X-Requester-Id": "stranger-rw-" + mark},
		"another organization": {"Authorization": "Bearer key-rw-platform", "X-Requester-Id": owner, "X-Requester-Org": "other-" + mark},
	} {
		h[handlers.ConsistencyHeader] = token
		resp, body := do(t, "GET", two.URL+"/v1/agents", h, "")
		mustErrorBody(t, resp, body, http.StatusBadRequest, "invalid")
		if !strings.Contains(string(body), "another requester") {
			t.Errorf("the token sent for %s: %s, want it refused as made for another", name, body)
		}
	}
	// Nothing the refused writes sent was stored.
	resp, body = do(t, "GET", one.URL+"/v1/memories?agent_id="+agent, as, "")
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "must not be stored") {
		t.Errorf("after the refused writes: %d %s", resp.StatusCode, body)
	}
}
