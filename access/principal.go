package access

import (
	"sort"

	"github.com/memgate/memgate/graph"
)

// Principal is who is calling: the requester the host asserts in X-Requester-Id, what
// the store knows about it, and the host it came through. It is resolved once per
// request and fixed for the rest of it.
type Principal struct {
	ID         string
	Host       Host
	Teams      map[string]graph.Role
	Promoter   bool
	Owns       map[string]bool // agent ids
	SharedWith map[string]bool // agents whose private space was shared with it
	// ExpiredShares are agents whose share with it has lapsed: they grant nothing.
	ExpiredShares map[string]bool
	// Delegated are agents whose owners let it write their memories in the agents' own
	// spaces (delegations in force). A delegation gives no read access.
	Delegated map[string]bool
}

// NewPrincipal builds a principal from the store's facts.
func NewPrincipal(id string, host Host, f graph.PrincipalFacts) Principal {
	p := Principal{ID: id, Host: host, Teams: map[string]graph.Role{}, Promoter: f.Promoter,
		Owns: map[string]bool{}, SharedWith: map[string]bool{}, ExpiredShares: map[string]bool{},
		Delegated: map[string]bool{}}
	for team, role := range f.Teams {
		if graph.ValidID(team) && (role == graph.RoleReader || role == graph.RoleWriter) {
			p.Teams[team] = role
		}
	}
	for _, a := range f.Owns {
		p.Owns[a] = true
	}
	for _, a := range f.SharedWith {
		p.SharedWith[a] = true
	}
	for _, a := range f.ExpiredShares {
		p.ExpiredShares[a] = true
	}
	for _, a := range f.Delegated {
		p.Delegated[a] = true
	}
	return p
}

// canReadPrivate reports whether p may read agent's private space.
func (p Principal) canReadPrivate(agent string) bool { return p.Owns[agent] || p.SharedWith[agent] }

// delegate reports whether p writes agent's memories by delegation only: it does not
// own the agent.
func (p Principal) delegate(agent string) bool { return p.Delegated[agent] && !p.Owns[agent] }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
