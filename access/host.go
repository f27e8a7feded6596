// Package access decides who may do what: host keys, principals, the Authorizer and
// its policy, and the audit events it produces. It does no I/O.
package access

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/memgate/memgate/graph"
)

// Host is the program that calls memgate on behalf of its requesters, identified by
// the API key it presents, or an end user's identity provider when the bearer is a
// JWT. Trusted hosts are refused writes they may not make; confined hosts are
// redirected to the agent's private space (see Authorizer). A host names only the
// requesters its binding lists (MayName).
type Host struct {
	// Org is the organization of every requester the host names; for a platform
	// host, the one the request names.
	Org     graph.Org `json:"org,omitempty"`
	Name    string    `json:"name"`
	Trusted bool      `json:"trusted"`
	Admin   bool      `json:"admin"`
	// Requesters are the X-Requester-Id values the host may send: exact ids, prefixes
	// ending in * ("app1-*"), or * for any.
	Requesters []string `json:"requesters"`
	// Platform hosts are admin hosts that may act in any organization: each request
	// names it (X-Requester-Org).
	Platform bool `json:"platform,omitempty"`
	// AssertTeams lets the host name, per request, teams its requester belongs to
	// (X-Requester-Teams; Principal.Assert). Only a trusted key has it (CheckKeys), and
	// it stays with the key when a route confines the host (MCP).
	AssertTeams bool `json:"assert_teams"`
	// Subject is the requester a verified JWT names: the request's requester when it
	// sends no X-Requester-Id. Empty for host keys.
	Subject string `json:"-"`
}

// InOrg returns the host acting in org for one request: a platform host may name any
// organization, any other host only its own (naming another is EFORBIDDEN). An empty
// name keeps the host's own.
func (h Host) InOrg(name string) (Host, error) {
	if name == "" || graph.Org(name) == h.Org {
		return h, nil
	}
	if !h.Platform {
		return Host{}, graph.Errorf(graph.EFORBIDDEN, "only a platform key may name an organization other than its own")
	}
	if err := graph.CheckOrg("X-Requester-Org", name); err != nil {
		return Host{}, err
	}
	h.Org = graph.Org(name)
	return h, nil
}

// MayName reports whether the host's binding lets it act for requester.
func (h Host) MayName(requester string) bool {
	for _, r := range h.Requesters {
		if prefix, ok := strings.CutSuffix(r, "*"); (ok && strings.HasPrefix(requester, prefix)) || r == requester {
			return true
		}
	}
	return false
}

// DevHost is the host every request comes from in dev mode (no keys configured,
// loopback only): trusted, admin, naming anyone and asserting teams, so one developer
// can use every route.
var DevHost = Host{Name: "dev", Trusted: true, Admin: true, Requesters: []string{"*"}, AssertTeams: true}

// KeySpec is one API key a host presents as "Authorization: Bearer <key>", as the
// configuration gives it (auth.keys): only the hex SHA-256 of the key, never the key
// itself. Requesters binds the key to the X-Requester-Id values it may send: ids,
// prefixes ending in * ("app1-*"), or *. Without it a trusted key may name anyone and
// a confined key no one. Org is the organization of the requesters the key names;
// Platform (admin keys only) lets it act in any organization a request names.
// AssertTeams (trusted keys only) lets the key name, per request, the teams its
// requester belongs to (X-Requester-Teams).
type KeySpec struct {
	Name        string   `yaml:"name"`
	SHA256      string   `yaml:"sha256"`
	Trusted     bool     `yaml:"trusted"`
	Admin       bool     `yaml:"admin"`
	Requesters  []string `yaml:"requesters"`
	AssertTeams bool     `yaml:"assert_teams"`
	Org         string   `yaml:"org"` // empty: the implicit organization
	Platform    bool     `yaml:"platform"`
}

// KeyProblem is one thing wrong with a host key of a list: Field is name, sha256,
// requesters[j] or assert_teams.
type KeyProblem struct {
	Index   int
	Field   string
	Message string
}

// CheckKeys returns every problem of a list of host keys: a name empty, used by
// another key or starting as JWT users' hosts do; a sha256 that is not 64 hex
// characters or is another key's; a requester binding that is not one (CheckBinding);
// assert_teams on a key that is not trusted.
// NewKeyring refuses a list with any; the configuration reports them all.
func CheckKeys(specs []KeySpec) []KeyProblem {
	var out []KeyProblem
	add := func(i int, field, format string, args ...any) {
		out = append(out, KeyProblem{Index: i, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	names, hashes := map[string]bool{}, map[string]bool{}
	for i, s := range specs {
		switch {
		case s.Name == "":
			add(i, "name", "must not be empty")
		case names[s.Name]:
			add(i, "name", "%q is used by another key", s.Name)
		case strings.HasPrefix(s.Name, jwtHostPrefix):
			add(i, "name", "names starting %s are the JWT users'", jwtHostPrefix)
		}
		names[s.Name] = true
		hash := strings.ToLower(s.SHA256)
		if b, err := hex.DecodeString(hash); err != nil || len(b) != sha256.Size {
			add(i, "sha256", "must be the 64-character hex SHA-256 of the key")
		} else if hashes[hash] {
			add(i, "sha256", "the same key is configured twice")
		}
		hashes[hash] = true
		if s.Org != "" {
			if err := graph.CheckOrg("org", s.Org); err != nil {
				add(i, "org", "%q is not an organization name (^[a-z0-9][a-z0-9-]{0,30}$)", s.Org)
			}
		}
		if s.Platform && !s.Admin {
			add(i, "platform", "a platform key must be an admin key")
		}
		for j, r := range s.Requesters {
			if err := CheckBinding(r); err != nil {
				add(i, fmt.Sprintf("requesters[%d]", j), "%v", err)
			}
		}
		if s.AssertTeams && !s.Trusted {
			add(i, "assert_teams", "key %q may assert teams only with trusted: true", s.Name)
		}
	}
	return out
}

// CheckBinding returns an error unless pattern is a requester id, a prefix of one
// followed by *, or *.
func CheckBinding(pattern string) error {
	prefix, wild := strings.CutSuffix(pattern, "*")
	if (wild && (prefix == "" || graph.ValidID(prefix+"x"))) || (!wild && graph.ValidID(pattern)) {
		return nil
	}
	return fmt.Errorf("%q is neither a requester id, a prefix of one ending in *, nor *", pattern)
}

// TokenVerifier checks an end user's bearer token (a JWT of the configured identity
// provider) and returns the requester it names and its organization, or
// EUNAUTHENTICATED.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (requester string, org graph.Org, err error)
}

// Keyring authenticates host keys, and end users' JWTs when it has a TokenVerifier.
// It keeps only the keys' hashes.
type Keyring struct {
	hashes [][]byte
	hosts  []Host
	tokens TokenVerifier
}

// NewKeyring builds a keyring. No specs and no tokens means dev mode.
func NewKeyring(specs []KeySpec, tokens TokenVerifier) (*Keyring, error) {
	if problems := CheckKeys(specs); len(problems) > 0 {
		p := problems[0]
		return nil, fmt.Errorf("host key %d (%q): %s %s", p.Index, specs[p.Index].Name, p.Field, p.Message)
	}
	k := &Keyring{tokens: tokens}
	for _, s := range specs {
		h, _ := hex.DecodeString(strings.ToLower(s.SHA256))
		requesters := s.Requesters
		if requesters == nil && s.Trusted {
			requesters = []string{"*"}
		}
		k.hashes = append(k.hashes, h)
		k.hosts = append(k.hosts, Host{Org: graph.Org(s.Org), Name: s.Name, Trusted: s.Trusted, Admin: s.Admin,
			Platform: s.Platform, Requesters: append([]string{}, requesters...), AssertTeams: s.AssertTeams})
	}
	return k, nil
}

// Host returns the configured host key named name (DevHost in dev mode), and false
// when there is none.
func (k *Keyring) Host(name string) (Host, bool) {
	if k.DevMode() {
		return DevHost, name == DevHost.Name
	}
	for _, h := range k.hosts {
		if h.Name == name {
			return h, true
		}
	}
	return Host{}, false
}

// jwtHostPrefix starts the host name of a request authenticated by a JWT: "jwt:"
// and the requester, so each end user has a rate limit and an audit trail of its own.
const jwtHostPrefix = "jwt:"

// IsJWTHost reports whether name is the host name of a request an end user's JWT
// authenticated.
func IsJWTHost(name string) bool { return strings.HasPrefix(name, jwtHostPrefix) }

// DevMode reports whether no keys and no identity provider are configured.
func (k *Keyring) DevMode() bool { return len(k.hashes) == 0 && k.tokens == nil }

// Authenticate returns the host whose key is bearer. In dev mode every request is
// DevHost. A bearer that is no host key but a JWT, when an identity provider is
// configured, is verified: a valid one is a confined host bound to the one requester
// it names. It returns EUNAUTHENTICATED for a missing or unknown key or an invalid
// token. Every configured hash is compared in constant time, so timing tells nothing
// about which key is close.
func (k *Keyring) Authenticate(ctx context.Context, bearer string) (Host, error) {
	if k.DevMode() {
		return DevHost, nil
	}
	if bearer == "" {
		return Host{}, graph.Errorf(graph.EUNAUTHENTICATED, "missing credentials: send Authorization: Bearer <host key or JWT>")
	}
	sum := sha256.Sum256([]byte(bearer))
	found := -1
	for i, h := range k.hashes {
		if subtle.ConstantTimeCompare(sum[:], h) == 1 {
			found = i
		}
	}
	if found >= 0 {
		return k.hosts[found], nil
	}
	if k.tokens != nil && strings.Count(bearer, ".") == 2 {
		requester, org, err := k.tokens.Verify(ctx, bearer)
		if err != nil {
			return Host{}, err
		}
		return Host{Org: org, Name: jwtHostPrefix + org.Prefix() + requester, Requesters: []string{requester}, Subject: requester}, nil
	}
	return Host{}, graph.Errorf(graph.EUNAUTHENTICATED, "unknown host key")
}

// HashKey returns the hex SHA-256 of a key, the form auth.keys[].sha256 takes.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
