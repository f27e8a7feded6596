// Package idptest is an identity provider for tests: it makes its own signing keys,
// publishes them as a JWK Set (a file or an HTTP endpoint) and signs tokens.
package idptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer and Audience are what tokens carry unless a test says otherwise.
const (
	Issuer   = "https://idp.test/"
	Audience = "memgate"
)

// Key is one signing key and its kid.
type Key struct {
	KID    string
	Method jwt.SigningMethod
	signer any
	public map[string]any // the JWK
}

// RSAKey makes an RS256 key.
func RSAKey(tb testing.TB, kid string) *Key {
	tb.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	return &Key{KID: kid, Method: jwt.SigningMethodRS256, signer: k, public: map[string]any{
		"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}}
}

// ECKey makes an ES256 key.
func ECKey(tb testing.TB, kid string) *Key {
	tb.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	x, y := make([]byte, 32), make([]byte, 32)
	k.X.FillBytes(x)
	k.Y.FillBytes(y)
	return &Key{KID: kid, Method: jwt.SigningMethodES256, signer: k, public: map[string]any{
		"kty": "EC", "kid": kid, "alg": "ES256", "use": "sig", "crv": "P-256", "x": b64(x), "y": b64(y)}}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Sign makes a token with claims, signed by k. Claims is taken as is: a test of
// an expired or foreign token sets exp, iss or aud itself.
func (k *Key) Sign(tb testing.TB, claims jwt.MapClaims) string {
	tb.Helper()
	t := jwt.NewWithClaims(k.Method, claims)
	t.Header["kid"] = k.KID
	s, err := t.SignedString(k.signer)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// Token is a valid token for subject, signed by k, good for an hour.
func (k *Key) Token(tb testing.TB, subject string) string {
	tb.Helper()
	now := time.Now()
	return k.Sign(tb, jwt.MapClaims{"iss": Issuer, "aud": Audience, "sub": subject,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
}

// JWKS is the JSON Web Key Set publishing keys.
func JWKS(tb testing.TB, keys ...*Key) []byte {
	tb.Helper()
	set := map[string]any{"keys": []any{}}
	for _, k := range keys {
		set["keys"] = append(set["keys"].([]any), k.public)
	}
	b, err := json.Marshal(set)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// WriteJWKS writes the set of keys to path (replacing it), for a jwks_file.
func WriteJWKS(tb testing.TB, path string, keys ...*Key) {
	tb.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".jwks.tmp")
	if err := os.WriteFile(tmp, JWKS(tb, keys...), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}

// Server publishes a key set over HTTP, for a jwks_url; Publish changes it.
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	set  []byte
	hits int
}

// NewServer serves keys until the test ends.
func NewServer(tb testing.TB, keys ...*Key) *Server {
	s := &Server{set: JWKS(tb, keys...)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.hits++
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.set)
	}))
	tb.Cleanup(s.Close)
	return s
}

// Publish replaces the served set.
func (s *Server) Publish(tb testing.TB, keys ...*Key) {
	set := JWKS(tb, keys...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set = set
}

// Hits is how often the set was fetched.
func (s *Server) Hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}
