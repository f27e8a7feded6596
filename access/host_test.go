package access_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

func TestKeyring_Authenticate(t *testing.T) {
	ring, err := access.NewKeyring([]access.KeySpec{
		{Name: "agent-host", SHA256: access.HashKey("s3cret-agent"), Trusted: true},
		{Name: "ops", SHA256: access.HashKey("s3cret-ops"), Trusted: true, Admin: true},
		{Name: "plugin", SHA256: access.HashKey("s3cret-plugin"), Requesters: []string{"app1-*", "carol"}},
		{Name: "teams", SHA256: access.HashKey("s3cret-teams"), Trusted: true, AssertTeams: true},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ring.DevMode() {
		t.Fatal("a keyring with keys is in dev mode")
	}
	allowed := map[string]access.Host{
		"s3cret-agent":  {Name: "agent-host", Trusted: true, Requesters: []string{"*"}},
		"s3cret-ops":    {Name: "ops", Trusted: true, Admin: true, Requesters: []string{"*"}},
		"s3cret-plugin": {Name: "plugin", Requesters: []string{"app1-*", "carol"}},
		"s3cret-teams":  {Name: "teams", Trusted: true, Requesters: []string{"*"}, AssertTeams: true},
	}
	for key, want := range allowed {
		got, err := ring.Authenticate(context.Background(), key)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Authenticate(%q) = %+v, %v; want %+v", key, got, err, want)
		}
	}
	denied := []string{"", "s3cret", "s3cret-agent ", "S3CRET-AGENT", access.HashKey("s3cret-agent")}
	for _, key := range denied {
		if got, err := ring.Authenticate(context.Background(), key); graph.ErrorCode(err) != graph.EUNAUTHENTICATED {
			t.Errorf("Authenticate(%q) = %+v, %v; want %s", key, got, err, graph.EUNAUTHENTICATED)
		}
	}
}

func TestKeyring_DevMode(t *testing.T) {
	ring, err := access.NewKeyring(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "anything"} {
		got, err := ring.Authenticate(context.Background(), key)
		if err != nil || !reflect.DeepEqual(got, access.DevHost) {
			t.Errorf("dev mode Authenticate(%q) = %+v, %v; want DevHost", key, got, err)
		}
	}
}

func TestNewKeyring_ErrInvalid(t *testing.T) {
	for _, hash := range []string{"", "abc", access.HashKey("x") + "00", "zz" + access.HashKey("x")[2:]} {
		if _, err := access.NewKeyring([]access.KeySpec{{Name: "k", SHA256: hash}}, nil); err == nil {
			t.Errorf("NewKeyring accepted sha256 %q", hash)
		}
	}
}

// TestHost_MayName: a key names exactly the requesters its binding lists; a confined
// key without a binding names nobody; a trusted one without a binding names anyone.
func TestHost_MayName(t *testing.T) {
	ring, err := access.NewKeyring([]access.KeySpec{
		{Name: "bound", SHA256: access.HashKey("k-bound"), Requesters: []string{"app1-*", "carol"}},
		{Name: "unbound", SHA256: access.HashKey("k-unbound")},
		{Name: "trusted", SHA256: access.HashKey("k-trusted"), Trusted: true},
		{Name: "narrow", SHA256: access.HashKey("k-narrow"), Trusted: true, Requesters: []string{"svc-*"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ allowed, denied []string }{
		"k-bound":   {[]string{"app1-", "app1-alice", "carol"}, []string{"alice", "app1", "app2-alice", "carol2", "xapp1-alice"}},
		"k-unbound": {nil, []string{"alice", "carol", "app1-alice", "dev"}},
		"k-trusted": {[]string{"alice", "app1-bob", "z"}, nil},
		"k-narrow":  {[]string{"svc-a"}, []string{"alice", "svc"}},
	}
	for key, c := range cases {
		host, err := ring.Authenticate(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.allowed {
			if !host.MayName(r) {
				t.Errorf("%s may not name %s; its binding %v says it may", host.Name, r, host.Requesters)
			}
		}
		for _, r := range c.denied {
			if host.MayName(r) {
				t.Errorf("%s may name %s; its binding %v says it may not", host.Name, r, host.Requesters)
			}
		}
	}
}

func TestNewKeyring_ErrBinding(t *testing.T) {
	for _, r := range []string{"", "Alice", "app1:*", "a*b", "**", "-x*", "alice bob"} {
		if _, err := access.NewKeyring([]access.KeySpec{{Name: "k", SHA256: access.HashKey("k"), Requesters: []string{r}}}, nil); err == nil {
			t.Errorf("NewKeyring accepted the binding %q", r)
		}
	}
	if _, err := access.NewKeyring([]access.KeySpec{{Name: "jwt:alice", SHA256: access.HashKey("k"), Trusted: true}}, nil); err == nil {
		t.Error("NewKeyring accepted a key named like a JWT user")
	}
}

// TestCheckKeys: every problem of a key list is named by the key's place and field,
// and NewKeyring refuses exactly the lists that have one (the configuration reports
// the same problems: config's Validate uses CheckKeys).
func TestCheckKeys(t *testing.T) {
	ok := func(name string) access.KeySpec { return access.KeySpec{Name: name, SHA256: access.HashKey(name)} }
	for _, c := range []struct {
		name string
		keys []access.KeySpec
		want []string // index.field of each problem
	}{
		{"fine", []access.KeySpec{ok("a"), ok("b")}, nil},
		{"no name", []access.KeySpec{ok("a"), {SHA256: access.HashKey("b")}}, []string{"1.name"}},
		{"name twice", []access.KeySpec{ok("a"), {Name: "a", SHA256: access.HashKey("b")}}, []string{"1.name"}},
		{"jwt name", []access.KeySpec{ok("jwt:a")}, []string{"0.name"}},
		{"bad hash", []access.KeySpec{{Name: "a", SHA256: "abc"}}, []string{"0.sha256"}},
		{"hash twice, other case", []access.KeySpec{ok("a"), {Name: "b", SHA256: strings.ToUpper(access.HashKey("a"))}}, []string{"1.sha256"}},
		{"bad binding", []access.KeySpec{{Name: "a", SHA256: access.HashKey("a"), Requesters: []string{"bob", "Al ice"}}}, []string{"0.requesters[1]"}},
		{"orgs", []access.KeySpec{{Name: "a", SHA256: access.HashKey("a"), Org: "acme"}, {Name: "b", SHA256: access.HashKey("b"), Org: "acme", Admin: true, Platform: true}}, nil},
		{"bad org", []access.KeySpec{{Name: "a", SHA256: access.HashKey("a"), Org: "ac_me"}}, []string{"0.org"}},
		{"platform, not admin", []access.KeySpec{{Name: "a", SHA256: access.HashKey("a"), Platform: true}}, []string{"0.platform"}},
		{"asserting, trusted", []access.KeySpec{{Name: "a", SHA256: access.HashKey("a"), Trusted: true, AssertTeams: true}}, nil},
		{"asserting, confined", []access.KeySpec{ok("a"), {Name: "b", SHA256: access.HashKey("b"), AssertTeams: true}}, []string{"1.assert_teams"}},
	} {
		var got []string
		for _, p := range access.CheckKeys(c.keys) {
			got = append(got, fmt.Sprintf("%d.%s", p.Index, p.Field))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: problems %v, want %v", c.name, got, c.want)
		}
		if _, err := access.NewKeyring(c.keys, nil); (err != nil) != (len(c.want) > 0) {
			t.Errorf("%s: NewKeyring error %v, want one only when CheckKeys finds a problem", c.name, err)
		}
	}
}

// TestHost_InOrg: a platform host acts in the organization a request names; any other
// host only in its own, and naming another is refused.
func TestHost_InOrg(t *testing.T) {
	acme := access.Host{Org: "acme", Name: "acme-app", Trusted: true}
	platform := access.Host{Name: "ops", Trusted: true, Admin: true, Platform: true}
	for _, c := range []struct {
		host    access.Host
		name    string
		wantOrg graph.Org
		code    string
	}{
		{acme, "", "acme", ""},
		{acme, "acme", "acme", ""},
		{acme, "globex", "", graph.EFORBIDDEN},
		{access.Host{Name: "plain", Trusted: true, Admin: true}, "acme", "", graph.EFORBIDDEN},
		{platform, "", graph.DefaultOrg, ""},
		{platform, "globex", "globex", ""},
		{platform, "Glo_bex", "", graph.EINVALID},
	} {
		got, err := c.host.InOrg(c.name)
		if graph.ErrorCode(err) != c.code || (err == nil && got.Org != c.wantOrg) {
			t.Errorf("%s.InOrg(%q) = %+v, %v; want org %q, code %q", c.host.Name, c.name, got, err, c.wantOrg, c.code)
		}
	}
}

// verifier stands for the identity provider (access/idp is tested on its own): a
// token names "requester" or "org/requester".
type verifier map[string]string

func (v verifier) Verify(_ context.Context, token string) (string, graph.Org, error) {
	if r, ok := v[token]; ok {
		if org, requester, ok := strings.Cut(r, "/"); ok {
			return requester, graph.Org(org), nil
		}
		return r, graph.DefaultOrg, nil
	}
	return "", "", graph.Errorf(graph.EUNAUTHENTICATED, "invalid token")
}

// TestKeyring_JWT: a bearer that is no host key but a JWT is verified; a valid one is
// a confined, non-admin host bound to its one requester; a host key still wins.
func TestKeyring_JWT(t *testing.T) {
	ring, err := access.NewKeyring([]access.KeySpec{{Name: "ops", SHA256: access.HashKey("k.ops.x"), Trusted: true, Admin: true}},
		verifier{"h.alice.s": "alice", "h.acme-alice.s": "acme/alice"})
	if err != nil {
		t.Fatal(err)
	}
	if ring.DevMode() {
		t.Fatal("a keyring with an identity provider is in dev mode")
	}
	got, err := ring.Authenticate(context.Background(), "h.alice.s")
	want := access.Host{Name: "jwt:alice", Requesters: []string{"alice"}, Subject: "alice"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Authenticate(JWT) = %+v, %v; want %+v", got, err, want)
	}
	// The same requester of another organization is another host: its own rate limit
	// and audit trail, its own organization.
	got, err = ring.Authenticate(context.Background(), "h.acme-alice.s")
	want = access.Host{Org: "acme", Name: "jwt:org-acme_alice", Requesters: []string{"alice"}, Subject: "alice"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Authenticate(JWT of acme) = %+v, %v; want %+v", got, err, want)
	}
	if got, err := ring.Authenticate(context.Background(), "k.ops.x"); err != nil || got.Name != "ops" {
		t.Fatalf("a host key with dots: %+v, %v", got, err)
	}
	for _, bearer := range []string{"h.mallory.s", "not-a-jwt", ""} {
		if got, err := ring.Authenticate(context.Background(), bearer); graph.ErrorCode(err) != graph.EUNAUTHENTICATED {
			t.Errorf("Authenticate(%q) = %+v, %v; want unauthenticated", bearer, got, err)
		}
	}
	if _, err := access.NewKeyring(nil, verifier{}); err != nil {
		t.Fatal(err)
	}
}
