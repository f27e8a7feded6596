package idp_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/memgate/memgate/access/idp"
	"github.com/memgate/memgate/access/idp/idptest"
	"github.com/memgate/memgate/graph"
)

func fileVerifier(t *testing.T, keys ...*idptest.Key) (*idp.Verifier, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jwks.json")
	idptest.WriteJWKS(t, path, keys...)
	v, err := idp.New(context.Background(), idp.Options{Issuer: idptest.Issuer, Audience: idptest.Audience, JWKSFile: path})
	if err != nil {
		t.Fatal(err)
	}
	return v, path
}

// TestVerify: a token of the configured issuer, for memgate, signed by a published key
// and unexpired names its requester; every other token is 401 and says why.
func TestVerify(t *testing.T) {
	rsaKey, ecKey := idptest.RSAKey(t, "r1"), idptest.ECKey(t, "e1")
	v, _ := fileVerifier(t, rsaKey, ecKey)
	ctx := context.Background()
	now := time.Now()
	claims := func(change func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"iss": idptest.Issuer, "aud": idptest.Audience, "sub": "alice",
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		change(c)
		return c
	}
	for name, token := range map[string]string{
		"RS256":         rsaKey.Token(t, "alice"),
		"ES256":         ecKey.Token(t, "alice"),
		"audience list": rsaKey.Sign(t, claims(func(c jwt.MapClaims) { c["aud"] = []string{"other", idptest.Audience} })),
	} {
		if got, _, err := v.Verify(ctx, token); err != nil || got != "alice" {
			t.Errorf("%s: Verify = %q, %v; want alice", name, got, err)
		}
	}

	stranger := idptest.RSAKey(t, "r1") // the published kid, another key
	hmac := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(func(jwt.MapClaims) {}))
	hmac.Header["kid"] = "r1"
	hmacToken, _ := hmac.SignedString([]byte("a guessable secret"))
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims(func(jwt.MapClaims) {})).SignedString(jwt.UnsafeAllowNoneSignatureType)
	valid := rsaKey.Token(t, "alice")
	parts := strings.Split(valid, ".")
	denied := map[string]struct{ token, why string }{
		"expired":         {rsaKey.Sign(t, claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() })), "expired"},
		"no exp":          {rsaKey.Sign(t, claims(func(c jwt.MapClaims) { delete(c, "exp") })), "required claim"},
		"not yet":         {rsaKey.Sign(t, claims(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() })), "not valid yet"},
		"other issuer":    {rsaKey.Sign(t, claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.test/" })), "issuer"},
		"other audience":  {rsaKey.Sign(t, claims(func(c jwt.MapClaims) { c["aud"] = "another-service" })), "audience"},
		"unknown key":     {stranger.Token(t, "alice"), "signature"},
		"unknown kid":     {idptest.RSAKey(t, "r9").Token(t, "alice"), "signature"},
		"HS256":           {hmacToken, "signature"},
		"alg none":        {none, "signature"},
		"payload swapped": {parts[0] + "." + strings.Split(rsaKey.Token(t, "mallory"), ".")[1] + "." + parts[2], "signature"},
		"garbage":         {"a.b.c", "valid JWT"},
		"bad sub":         {rsaKey.Token(t, "Alice|123"), "requester id"},
		"no sub":          {rsaKey.Sign(t, claims(func(c jwt.MapClaims) { delete(c, "sub") })), "requester id"},
	}
	for name, c := range denied {
		got, _, err := v.Verify(ctx, c.token)
		if graph.ErrorCode(err) != graph.EUNAUTHENTICATED || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: Verify = %q, %v; want unauthenticated saying %q", name, got, err, c.why)
		}
	}
}

// TestVerify_NamesTheClaim: a token refused for a claim that is missing, wrong or of
// the wrong type is told which claim, and only that one (a token without iss or aud
// was once told it lacked exp).
func TestVerify_NamesTheClaim(t *testing.T) {
	key := idptest.RSAKey(t, "r1")
	v, _ := fileVerifier(t, key)
	now := time.Now()
	claimNames := regexp.MustCompile(`\b(iss|aud|exp|nbf|iat|sub)\b`)
	for name, tc := range map[string]struct {
		change func(jwt.MapClaims)
		want   string // the claims the message names, in order
	}{
		"no iss":         {func(c jwt.MapClaims) { delete(c, "iss") }, "iss"},
		"empty iss":      {func(c jwt.MapClaims) { c["iss"] = "" }, "iss"},
		"no aud":         {func(c jwt.MapClaims) { delete(c, "aud") }, "aud"},
		"empty aud list": {func(c jwt.MapClaims) { c["aud"] = []string{} }, "aud"},
		"no exp":         {func(c jwt.MapClaims) { delete(c, "exp") }, "exp"},
		"no sub":         {func(c jwt.MapClaims) { delete(c, "sub") }, "sub"},
		"no iss, no aud": {func(c jwt.MapClaims) { delete(c, "iss"); delete(c, "aud") }, "iss aud"},
		"nothing":        {func(c jwt.MapClaims) { clear(c) }, "exp iss aud sub"},
		"other iss":      {func(c jwt.MapClaims) { c["iss"] = "https://evil.test/" }, "iss"},
		"other aud":      {func(c jwt.MapClaims) { c["aud"] = "another-service" }, "aud"},
		"expired":        {func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() }, "exp"},
		"nbf ahead":      {func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() }, "nbf"},
		"iat ahead":      {func(c jwt.MapClaims) { c["iat"] = now.Add(time.Hour).Unix() }, "iat"},
		"exp a string":   {func(c jwt.MapClaims) { c["exp"] = "tomorrow" }, "exp"},
		"iss a number":   {func(c jwt.MapClaims) { c["iss"] = 7 }, "iss"},
		"sub a number":   {func(c jwt.MapClaims) { c["sub"] = 7 }, "sub"},
	} {
		c := jwt.MapClaims{"iss": idptest.Issuer, "aud": idptest.Audience, "sub": "alice",
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		tc.change(c)
		got, _, err := v.Verify(context.Background(), key.Sign(t, c))
		if graph.ErrorCode(err) != graph.EUNAUTHENTICATED {
			t.Errorf("%s: Verify = %q, %v; want unauthenticated", name, got, err)
			continue
		}
		if named := strings.Join(claimNames.FindAllString(err.Error(), -1), " "); named != tc.want {
			t.Errorf("%s: %q names the claims [%s], want [%s]", name, err, named, tc.want)
		}
	}
}

// TestVerify_ClaimAndPrefix: the requester may come from another claim, with a prefix
// that keeps the identity provider's users apart from the ones hosts name.
func TestVerify_ClaimAndPrefix(t *testing.T) {
	key := idptest.RSAKey(t, "r1")
	path := filepath.Join(t.TempDir(), "jwks.json")
	idptest.WriteJWKS(t, path, key)
	v, err := idp.New(context.Background(), idp.Options{Issuer: idptest.Issuer, Audience: idptest.Audience,
		JWKSFile: path, Claim: "uid", RequesterPrefix: "sso-"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	token := key.Sign(t, jwt.MapClaims{"iss": idptest.Issuer, "aud": idptest.Audience, "sub": "ignored",
		"uid": "4711", "exp": now.Add(time.Minute).Unix()})
	if got, _, err := v.Verify(context.Background(), token); err != nil || got != "sso-4711" {
		t.Fatalf("Verify = %q, %v; want sso-4711", got, err)
	}
}

// TestVerify_OrgClaim: with an organization claim configured, a token's user is of the
// organization the claim names; a token without a valid one is refused, naming the
// claim.
func TestVerify_OrgClaim(t *testing.T) {
	key := idptest.RSAKey(t, "r1")
	path := filepath.Join(t.TempDir(), "jwks.json")
	idptest.WriteJWKS(t, path, key)
	v, err := idp.New(context.Background(), idp.Options{Issuer: idptest.Issuer, Audience: idptest.Audience,
		JWKSFile: path, OrgClaim: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	token := func(tenant any) string {
		c := jwt.MapClaims{"iss": idptest.Issuer, "aud": idptest.Audience, "sub": "alice", "exp": time.Now().Add(time.Minute).Unix()}
		if tenant != nil {
			c["tenant"] = tenant
		}
		return key.Sign(t, c)
	}
	if got, org, err := v.Verify(context.Background(), token("acme")); err != nil || got != "alice" || org != "acme" {
		t.Fatalf("Verify = %q, %q, %v; want alice of acme", got, org, err)
	}
	for name, tenant := range map[string]any{"missing": nil, "empty": "", "not a name": "Ac_me", "not a string": 7} {
		_, _, err := v.Verify(context.Background(), token(tenant))
		if graph.ErrorCode(err) != graph.EUNAUTHENTICATED || !strings.Contains(err.Error(), "tenant claim") {
			t.Errorf("%s: Verify error %v; want unauthenticated naming the tenant claim", name, err)
		}
	}
}

// TestVerify_FileRotation: a key added to the file verifies without a restart; a key
// removed from it no longer does.
func TestVerify_FileRotation(t *testing.T) {
	old, next := idptest.RSAKey(t, "old"), idptest.RSAKey(t, "next")
	v, path := fileVerifier(t, old)
	ctx := context.Background()
	if _, _, err := v.Verify(ctx, next.Token(t, "alice")); err == nil {
		t.Fatal("a key not yet published verified")
	}
	idptest.WriteJWKS(t, path, next)
	if got, _, err := v.Verify(ctx, next.Token(t, "alice")); err != nil || got != "alice" {
		t.Fatalf("after rotation: Verify = %q, %v", got, err)
	}
	if _, _, err := v.Verify(ctx, old.Token(t, "alice")); err == nil {
		t.Fatal("a key removed from the file still verifies")
	}
}

// TestVerify_URL: keys fetched over HTTP, cached (one fetch for many tokens), and
// fetched again when a token names a kid the cache lacks.
func TestVerify_URL(t *testing.T) {
	first, second := idptest.ECKey(t, "k1"), idptest.ECKey(t, "k2")
	srv := idptest.NewServer(t, first)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	v, err := idp.New(ctx, idp.Options{Issuer: idptest.Issuer, Audience: idptest.Audience, JWKSURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if got, _, err := v.Verify(ctx, first.Token(t, "bob")); err != nil || got != "bob" {
			t.Fatalf("Verify = %q, %v", got, err)
		}
	}
	if hits := srv.Hits(); hits != 1 {
		t.Fatalf("20 tokens fetched the key set %d times, want once", hits)
	}
	srv.Publish(t, first, second)
	if got, _, err := v.Verify(ctx, second.Token(t, "bob")); err != nil || got != "bob" {
		t.Fatalf("a newly published key: Verify = %q, %v", got, err)
	}
}

func TestNew_ErrOptions(t *testing.T) {
	ctx := context.Background()
	for name, o := range map[string]idp.Options{
		"neither":      {Issuer: idptest.Issuer, Audience: idptest.Audience},
		"both":         {Issuer: idptest.Issuer, Audience: idptest.Audience, JWKSFile: "x", JWKSURL: "http://127.0.0.1:1/"},
		"missing file": {Issuer: idptest.Issuer, Audience: idptest.Audience, JWKSFile: filepath.Join(t.TempDir(), "none.json")},
	} {
		if _, err := idp.New(ctx, o); err == nil {
			t.Errorf("%s: New accepted %+v", name, o)
		}
	}
}
