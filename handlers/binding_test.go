package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/access/idp"
	"github.com/memgate/memgate/access/idp/idptest"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/handlers"
	"github.com/memgate/memgate/service"
)

// bindingServer serves with a trusted key (any requester), an admin key, a confined
// key bound to the requesters starting app1-, an unbound confined key and the test's
// identity provider, whose signing key it returns; and the test's mark, and an admin
// client to read the audit log with.
func bindingServer(t *testing.T) (srv string, key *idptest.Key, suffix string, root client) {
	t.Helper()
	srv, key, suffix, root, _ = bindingService(t)
	return srv, key, suffix, root
}

// bindingService is bindingServer with the server's service.
func bindingService(t *testing.T) (srv string, key *idptest.Key, suffix string, root client, svc *service.Service) {
	t.Helper()
	key = idptest.RSAKey(t, "k1")
	path := filepath.Join(t.TempDir(), "jwks.json")
	idptest.WriteJWKS(t, path, key)
	v, err := idp.New(context.Background(), idp.Options{Issuer: idptest.Issuer, Audience: idptest.Audience, JWKSFile: path})
	if err != nil {
		t.Fatal(err)
	}
	s := newServerWith(t, []access.KeySpec{
		{Name: "agent-host", SHA256: access.HashKey(matrixKeys["trusted"]), Trusted: true},
		{Name: "ops", SHA256: access.HashKey(matrixKeys["admin"]), Trusted: true, Admin: true},
		{Name: "app1", SHA256: access.HashKey("key-app1"), Requesters: []string{"app1-*"}},
		{Name: "unbound", SHA256: access.HashKey("key-unbound")},
		{Name: "globex-host", SHA256: access.HashKey("key-globex"), Trusted: true, Org: "globex"},
		{Name: "globex-ops", SHA256: access.HashKey("key-globex-admin"), Trusted: true, Admin: true, Org: "globex"},
	}, v, func(s *service.Service) { svc = s })
	suffix = randomSuffix()
	neo4jtest.Forget(t, suffix)
	return s.URL, key, suffix, client{t: t, base: s.URL, key: matrixKeys["admin"], requester: "root-" + suffix}, svc
}

// denials counts the requester_denied events naming requester.
func denials(t *testing.T, root client, requester string) int {
	t.Helper()
	var page struct {
		Events []struct{ Kind, Actor, HostKey string } `json:"events"`
	}
	root.must(http.StatusOK, "GET", "/v1/audit?"+url.Values{"kind": {"requester_denied"}, "actor": {requester}, "limit": {"100"}}.Encode(), nil, &page)
	return len(page.Events)
}

// TestRequesterBinding: a confined key bound to app1-* acts for those requesters only;
// naming anyone else is 403 on every route, REST and MCP, each refusal one
// requester_denied event; an unbound confined key names nobody.
func TestRequesterBinding(t *testing.T) {
	t.Parallel()
	base, _, suffix, root := bindingServer(t)
	alice := client{t: t, base: base, key: matrixKeys["trusted"], requester: "alice-" + suffix}
	app1 := client{t: t, base: base, key: "key-app1", requester: "app1-carol-" + suffix}

	// Allowed: the bound key acts for a requester of its prefix.
	agent := "app1-agent-" + suffix
	app1.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	var mine added
	app1.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "app1 note"}, &mine)
	app1.must(http.StatusOK, "GET", "/v1/memories/"+mine.ID, nil, nil)

	aliceAgent := "alice-agent-" + suffix
	alice.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": aliceAgent}, nil)
	var hers added
	alice.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": aliceAgent, "messages": "alice's private note"}, &hers)

	// Denied: the same key naming alice, or a requester that merely contains app1-.
	routes := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/memories/" + hers.ID, nil},
		{"GET", "/v1/memories?agent_id=" + aliceAgent, nil},
		{"POST", "/v1/memories", map[string]any{"agent_id": aliceAgent, "messages": "planted"}},
		{"POST", "/v1/memories/search", map[string]any{"agent_id": aliceAgent, "query": "note"}},
		{"DELETE", "/v1/memories/" + hers.ID, nil},
		{"POST", "/v1/memories/" + hers.ID + "/promote", map[string]any{"target": "global"}},
		{"GET", "/v1/facts?agent_id=" + aliceAgent, nil},
		{"GET", "/v1/agents/" + aliceAgent, nil},
		{"PUT", "/v1/agents/" + aliceAgent + "/owner", map[string]any{"owner_id": "app1-carol-" + suffix}},
		{"PUT", "/v1/agents/" + aliceAgent + "/shares/app1-carol-" + suffix, nil},
		{"DELETE", "/v1/agents/" + aliceAgent, nil},
		{"PUT", "/v1/agents/" + aliceAgent + "/types", map[string]any{"entity_types": []string{}, "edge_types": []string{}}},
		{"PUT", "/v1/teams/app1-team-" + suffix + "/types", map[string]any{"entity_types": []string{}}},
	}
	forged := map[string]client{
		alice.requester:          {t: t, base: base, key: "key-app1", requester: alice.requester},
		"xapp1-" + suffix:        {t: t, base: base, key: "key-app1", requester: "xapp1-" + suffix},
		"app1-carol-" + suffix:   {t: t, base: base, key: "key-unbound", requester: "app1-carol-" + suffix},
		"unbound-dave-" + suffix: {t: t, base: base, key: "key-unbound", requester: "unbound-dave-" + suffix},
	}
	for requester, c := range forged {
		before := denials(t, root, requester)
		for _, r := range routes {
			status, body := c.do(r.method, r.path, r.body)
			if status != http.StatusForbidden {
				t.Errorf("%s through %s: %s %s = %d %s, want 403", requester, c.key, r.method, r.path, status, body)
			}
		}
		mcp := mcpStatus(t, base, c.key, requester)
		if mcp != http.StatusForbidden {
			t.Errorf("%s through %s: /mcp = %d, want 403", requester, c.key, mcp)
		}
		if got := denials(t, root, requester) - before; got != len(routes)+1 {
			t.Errorf("%s: %d requests refused, %d requester_denied events", requester, len(routes)+1, got)
		}
	}
	// Nothing changed for alice: her memory and agent are hers, unshared, with the
	// deployment's types.
	if types, _ := neo4jtest.SpaceTypes(t, "Agent", aliceAgent); types.EntityTypes != nil || types.EdgeTypes != nil {
		t.Errorf("a forged requester set alice's agent's types: %v", types)
	}
	alice.must(http.StatusOK, "GET", "/v1/memories/"+hers.ID, nil, nil)
	var a struct {
		OwnerID    string   `json:"owner_id"`
		SharedWith []string `json:"shared_with"`
	}
	alice.must(http.StatusOK, "GET", "/v1/agents/"+aliceAgent, nil, &a)
	if a.OwnerID != alice.requester || len(a.SharedWith) != 0 {
		t.Fatalf("alice's agent after the forged requests: %+v", a)
	}
}

// mcpStatus initializes an MCP session as requester through key and returns the
// HTTP status.
func mcpStatus(t *testing.T, base, key, requester string) int {
	t.Helper()
	header := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream"}
	if requester != "" {
		header["X-Requester-Id"] = requester
	}
	resp, _ := doMalformed(t, "POST", base+"/mcp", header,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	return resp.StatusCode
}

// TestJWT: an end user's valid token names the requester, needs no X-Requester-Id,
// and is a confined host; a token that is expired, foreign or forged is 401; a token
// with an X-Requester-Id naming someone else is 403, audited.
func TestJWT(t *testing.T) {
	t.Parallel()
	base, key, suffix, root := bindingServer(t)
	user := "jwt-erin-" + suffix
	token := key.Token(t, user)
	erin := client{t: t, base: base, key: token}

	var who handlers.WhoAmI
	erin.must(http.StatusOK, "GET", "/v1/whoami", nil, &who)
	if who.Host.Name != "jwt:"+user || who.Host.Trusted || who.Host.Admin || who.DevMode {
		t.Fatalf("whoami with a JWT: %+v", who)
	}
	agent := "jwt-agent-" + suffix
	erin.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	var a struct {
		OwnerID string `json:"owner_id"`
	}
	erin.must(http.StatusOK, "GET", "/v1/agents/"+agent, nil, &a)
	if a.OwnerID != user {
		t.Fatalf("the agent a JWT user created is owned by %q, want %q", a.OwnerID, user)
	}
	var m added
	erin.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "erin's note"}, &m)
	same := client{t: t, base: base, key: token, requester: user}
	same.must(http.StatusOK, "GET", "/v1/memories/"+m.ID, nil, nil)
	var got struct{ ID string }
	if !callTool(t, mcpSession(t, base, token, ""), "get_memory", map[string]any{"id": m.ID}, &got) || got.ID != m.ID {
		t.Fatalf("get_memory over MCP with a JWT: %+v", got)
	}

	// Someone else's token sees nothing of erin's private memory.
	other := client{t: t, base: base, key: key.Token(t, "jwt-frank-"+suffix)}
	if status, _ := other.do("GET", "/v1/memories/"+m.ID, nil); status != http.StatusNotFound {
		t.Fatalf("another JWT user reading erin's private memory: %d, want 404", status)
	}

	// A token naming erin, with X-Requester-Id naming another: 403, audited.
	victim := "jwt-grace-" + suffix
	before := denials(t, root, victim)
	forged := client{t: t, base: base, key: token, requester: victim}
	if status, body := forged.do("GET", "/v1/agents/"+agent, nil); status != http.StatusForbidden {
		t.Fatalf("a JWT with another X-Requester-Id: %d %s, want 403", status, body)
	}
	if got := denials(t, root, victim) - before; got != 1 {
		t.Fatalf("%d requester_denied events, want 1", got)
	}

	now := time.Now()
	claims := func(change func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"iss": idptest.Issuer, "aud": idptest.Audience, "sub": user, "exp": now.Add(time.Hour).Unix()}
		change(c)
		return c
	}
	for name, bad := range map[string]string{
		"expired":        key.Sign(t, claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() })),
		"other audience": key.Sign(t, claims(func(c jwt.MapClaims) { c["aud"] = "not-memgate" })),
		"other issuer":   key.Sign(t, claims(func(c jwt.MapClaims) { c["iss"] = "https://elsewhere.test/" })),
		"unknown key":    idptest.RSAKey(t, "k1").Token(t, user),
	} {
		c := client{t: t, base: base, key: bad}
		status, body := c.sendMalformed("GET", "/v1/agents/"+agent, nil)
		if status != http.StatusUnauthorized {
			t.Errorf("%s token: %d %s, want 401", name, status, body)
		}
		if status := mcpStatus(t, base, bad, ""); status != http.StatusUnauthorized {
			t.Errorf("%s token over MCP: %d, want 401", name, status)
		}
	}
}
