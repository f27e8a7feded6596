// Package access decides who may do what: host keys, principals, the Authorizer and
// its policy, and the audit events it produces. It does no I/O.
package access

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/memgate/memgate/graph"
)

// Host is the program that calls memgate on behalf of its requesters, identified by
// the API key it presents. Trusted hosts are refused writes they may not make;
// confined hosts are redirected to the agent's private space (see Authorizer).
type Host struct {
	Name    string `json:"name"`
	Trusted bool   `json:"trusted"`
	Admin   bool   `json:"admin"`
}

// DevHost is the host every request comes from in dev mode (no keys configured,
// loopback only): trusted and admin, so one developer can use every route.
var DevHost = Host{Name: "dev", Trusted: true, Admin: true}

// KeySpec configures one host key by the hex SHA-256 of the key.
type KeySpec struct {
	Name    string
	SHA256  string
	Trusted bool
	Admin   bool
}

// Keyring authenticates host keys. It keeps only hashes.
type Keyring struct {
	hashes [][]byte
	hosts  []Host
}

// NewKeyring builds a keyring. No specs means dev mode.
func NewKeyring(specs []KeySpec) (*Keyring, error) {
	k := &Keyring{}
	for _, s := range specs {
		h, err := hex.DecodeString(strings.ToLower(s.SHA256))
		if err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("host key %q: sha256 must be 64 hex characters", s.Name)
		}
		k.hashes = append(k.hashes, h)
		k.hosts = append(k.hosts, Host{Name: s.Name, Trusted: s.Trusted, Admin: s.Admin})
	}
	return k, nil
}

// DevMode reports whether no keys are configured.
func (k *Keyring) DevMode() bool { return len(k.hashes) == 0 }

// Authenticate returns the host whose key is bearer. In dev mode every request is
// DevHost. It returns EUNAUTHENTICATED for a missing or unknown key. Every configured
// hash is compared in constant time, so timing tells nothing about which key is close.
func (k *Keyring) Authenticate(bearer string) (Host, error) {
	if k.DevMode() {
		return DevHost, nil
	}
	if bearer == "" {
		return Host{}, graph.Errorf(graph.EUNAUTHENTICATED, "missing host key: send Authorization: Bearer <key>")
	}
	sum := sha256.Sum256([]byte(bearer))
	found := -1
	for i, h := range k.hashes {
		if subtle.ConstantTimeCompare(sum[:], h) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Host{}, graph.Errorf(graph.EUNAUTHENTICATED, "unknown host key")
	}
	return k.hosts[found], nil
}

// HashKey returns the hex SHA-256 of a key, the form auth.keys[].sha256 takes.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
