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
	"strings"
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
	// OrgClaim, when set, holds the organization of the token's user; a token without
	// a valid one is refused. Unset: every user is of the implicit organization.
	OrgClaim string
	Log      *slog.Logger
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

// Verify returns the requester a valid token names and its organization, or
// EUNAUTHENTICATED saying what is wrong with it (never echoing it): each claim at
// fault is named.
func (v *Verifier) Verify(ctx context.Context, token string) (string, graph.Org, error) {
	kf, err := v.keys()
	if err != nil {
		v.opts.Log.ErrorContext(ctx, "reading the identity provider's keys", "error", err.Error())
		return "", "", graph.Errorf(graph.EUNAVAILABLE, "the identity provider's keys cannot be read; retry later")
	}
	claims := jwt.MapClaims{}
	var problems []string
	if _, err := v.parser.ParseWithClaims(token, claims, kf.KeyfuncCtx(ctx)); err != nil {
		// Claims are only checked, and so only described, once the signature verifies.
		if !errors.Is(err, jwt.ErrTokenInvalidClaims) {
			return "", "", graph.Errorf(graph.EUNAUTHENTICATED, "%s", reason(err))
		}
		problems = claimProblems(err, claims)
	}
	value, _ := claims[v.opts.Claim].(string)
	requester := v.opts.RequesterPrefix + value
	if value == "" || !graph.ValidID(requester) {
		problems = append(problems, fmt.Sprintf(
			"the token's %s claim does not make a requester id (^[a-z0-9][a-z0-9_-]{0,62}$)", v.opts.Claim))
	}
	org := graph.DefaultOrg
	if v.opts.OrgClaim != "" {
		name, _ := claims[v.opts.OrgClaim].(string)
		if graph.CheckOrg("", name) != nil {
			problems = append(problems, fmt.Sprintf(
				"the token's %s claim does not name an organization (^[a-z0-9][a-z0-9-]{0,30}$)", v.opts.OrgClaim))
		}
		org = graph.Org(name)
	}
	if len(problems) > 0 {
		return "", "", graph.Errorf(graph.EUNAUTHENTICATED, "%s", strings.Join(problems, "; "))
	}
	return requester, org, nil
}

// reason says in a few words why a token whose claims were never checked was refused.
func reason(err error) string {
	if errors.Is(err, jwt.ErrTokenSignatureInvalid) || errors.Is(err, jwt.ErrTokenUnverifiable) {
		return "the token's signature does not verify with the identity provider's keys"
	}
	return "the bearer is neither a host key nor a valid JWT"
}

// claimProblems says what is wrong with each registered claim the parser refused (err),
// naming the claim: the required ones (exp, iss, aud: the parser's options) that are
// missing, then each one of the wrong type or failing its check.
func claimProblems(err error, claims jwt.MapClaims) []string {
	date := func(get func() (*jwt.NumericDate, error)) func() (bool, error) {
		return func() (bool, error) { d, err := get(); return d != nil, err }
	}
	issuer := func() (bool, error) { s, err := claims.GetIssuer(); return s != "", err }
	audience := func() (bool, error) { // as the parser counts an aud missing
		a, err := claims.GetAudience()
		return len(a) > 1 || len(a) == 1 && a[0] != "", err
	}
	var missing, problems []string
	for _, c := range []struct {
		name     string
		required bool
		get      func() (present bool, err error)
		failed   error  // the parser's error when the claim is there and fails its check
		says     string // what that means
	}{
		{"exp", true, date(claims.GetExpirationTime), jwt.ErrTokenExpired, "the token has expired (exp)"},
		{"nbf", false, date(claims.GetNotBefore), jwt.ErrTokenNotValidYet, "the token is not valid yet (nbf)"},
		{"iat", false, date(claims.GetIssuedAt), jwt.ErrTokenUsedBeforeIssued, "the token is not valid yet: it is issued in the future (iat)"},
		{"iss", true, issuer, jwt.ErrTokenInvalidIssuer, "the token's issuer (iss) is not the configured identity provider"},
		{"aud", true, audience, jwt.ErrTokenInvalidAudience, "the token's audience (aud) does not name this service"},
	} {
		present, typeErr := c.get()
		switch {
		case typeErr != nil:
			problems = append(problems, fmt.Sprintf("the token's %s claim has the wrong type", c.name))
		case !present && c.required:
			missing = append(missing, c.name)
		case errors.Is(err, c.failed):
			problems = append(problems, c.says)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		problems = append([]string{"the token lacks the required claim " + missing[0]}, problems...)
	default:
		problems = append([]string{"the token lacks the required claims " + strings.Join(missing, ", ")}, problems...)
	}
	if len(problems) == 0 {
		return []string{"the token's claims are not valid"}
	}
	return problems
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
