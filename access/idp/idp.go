// Package idp verifies end users' JWTs against the public keys an identity provider
// publishes (a JWKS, from a file or a URL), for hosts whose users sign in there: a
// valid token names its requester itself (access.TokenVerifier). Verification is the
// golang-jwt library's; the keys are kept by keyfunc/jwkset.
package idp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/memgate/memgate/graph"
)

// Options configure a Verifier. Exactly one of JWKSFile and JWKSURL is set.
type Options struct {
	Issuer   string // the iss a token must carry
	Audience string // one of the aud a token must carry
	JWKSFile string // a JWK Set on disk, read again when it changes
	JWKSURL  string // a JWK Set over HTTP(S), fetched every Refresh and for an unknown kid
	Refresh  time.Duration
	// Claim holds the requester id (default sub); RequesterPrefix is put before it, so
	// the identity provider's users can have a namespace of their own.
	Claim           string
	RequesterPrefix string
	Log             *slog.Logger
}

// Methods are the signing algorithms accepted: public-key ones only, so a key of the
// set can never serve as an HMAC secret.
var Methods = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Verifier checks tokens. It is safe for concurrent use.
type Verifier struct {
	opts   Options
	parser *jwt.Parser
	keys   func() (keyfunc.Keyfunc, error)
}

// New builds a Verifier. With a URL it starts fetching the keys in the background
// until ctx ends; an identity provider that is down at start makes tokens fail until
// it answers, not memgate fail to start.
func New(ctx context.Context, o Options) (*Verifier, error) {
	if o.Claim == "" {
		o.Claim = "sub"
	}
	if o.Refresh <= 0 {
		o.Refresh = time.Hour
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	v := &Verifier{opts: o, parser: jwt.NewParser(jwt.WithIssuer(o.Issuer), jwt.WithAudience(o.Audience),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithValidMethods(Methods), jwt.WithLeeway(30*time.Second))}
	switch {
	case (o.JWKSFile == "") == (o.JWKSURL == ""):
		return nil, errors.New("idp: set one of jwks_file and jwks_url")
	case o.JWKSURL != "":
		kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{o.JWKSURL}, keyfunc.Override{
			RefreshInterval: o.Refresh, HTTPTimeout: 10 * time.Second,
			RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
				return func(ctx context.Context, err error) {
					o.Log.WarnContext(ctx, "fetching the identity provider's keys", "url", u, "error", err.Error())
				}
			},
		})
		if err != nil {
			return nil, fmt.Errorf("idp: %w", err)
		}
		v.keys = func() (keyfunc.Keyfunc, error) { return kf, nil }
	default:
		f := &fileKeys{path: o.JWKSFile}
		if _, err := f.get(); err != nil {
			return nil, err
		}
		v.keys = f.get
	}
	return v, nil
}

// Verify returns the requester a valid token names, or EUNAUTHENTICATED saying what
// is wrong with it (never echoing it).
func (v *Verifier) Verify(ctx context.Context, token string) (string, error) {
	kf, err := v.keys()
	if err != nil {
		v.opts.Log.ErrorContext(ctx, "reading the identity provider's keys", "error", err.Error())
		return "", graph.Errorf(graph.EUNAVAILABLE, "the identity provider's keys cannot be read; retry later")
	}
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(token, claims, kf.KeyfuncCtx(ctx)); err != nil {
		return "", graph.Errorf(graph.EUNAUTHENTICATED, "%s", reason(err))
	}
	value, _ := claims[v.opts.Claim].(string)
	requester := v.opts.RequesterPrefix + value
	if value == "" || !graph.ValidID(requester) {
		return "", graph.Errorf(graph.EUNAUTHENTICATED,
			"the token's %s claim does not make a requester id (^[a-z0-9][a-z0-9_-]{0,62}$)", v.opts.Claim)
	}
	return requester, nil
}

// reason says in a few words why a token was refused.
func reason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "the token has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "the token is not valid yet"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "the token's issuer is not the configured identity provider"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "the token is not meant for this service (audience)"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "the token lacks a required claim (exp)"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "the token's signature does not verify with the identity provider's keys"
	}
	return "the bearer is neither a host key nor a valid JWT"
}

// fileKeys is a JWK Set on disk, parsed again when its modification time or size
// changes, so rotating keys needs no restart.
type fileKeys struct {
	path string

	mu      sync.Mutex
	mod     time.Time
	size    int64
	current keyfunc.Keyfunc
}

func (f *fileKeys) get() (keyfunc.Keyfunc, error) {
	info, err := os.Stat(f.path)
	if err != nil {
		return nil, fmt.Errorf("idp: jwks_file: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.current != nil && info.ModTime().Equal(f.mod) && info.Size() == f.size {
		return f.current, nil
	}
	raw, err := os.ReadFile(f.path)
	if err != nil {
		return nil, fmt.Errorf("idp: jwks_file: %w", err)
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("idp: jwks_file %s is not JSON", f.path)
	}
	kf, err := keyfunc.NewJWKSetJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("idp: jwks_file %s: %w", f.path, err)
	}
	f.current, f.mod, f.size = kf, info.ModTime(), info.Size()
	return kf, nil
}
