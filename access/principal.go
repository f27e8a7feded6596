package access

import (
	"fmt"
	"sort"
	"strings"

	"github.com/memgate/memgate/graph"
)

// Principal is who is calling: the requester the host asserts in X-Requester-Id, what
// the store knows about it, and the host it came through. It is resolved once per
// request and fixed for the rest of it.
type Principal struct {
	Org        graph.Org // the host's: every space, agent and team it is judged against is of it
	ID         string
	Host       Host
	Teams      map[string]graph.Role
	Promoter   bool
	Owns       map[string]bool // agent ids
	SharedWith map[string]bool // agents whose private space was shared with it
	// ExpiredShares are agents whose share with it has lapsed: they grant nothing.
	ExpiredShares map[string]bool
	// Asserted are the memberships its host asserted for this request alone
	// (X-Requester-Teams, see Assert), already counted in Teams; nil when none were.
	Asserted map[string]graph.Role
	// Delegated are agents whose owners let it write their memories in the agents' own
	// spaces (delegations in force). A delegation gives no read access.
	Delegated map[string]bool
}

// NewPrincipal builds a principal from the store's facts.
func NewPrincipal(id string, host Host, f graph.PrincipalFacts) Principal {
	p := Principal{Org: host.Org, ID: id, Host: host, Teams: map[string]graph.Role{}, Promoter: f.Promoter,
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

// MaxAssertedTeams is how many teams one request may assert.
const MaxAssertedTeams = 64

// ParseAssertedTeams reads X-Requester-Teams: comma-separated items, each a team name
// or name:role with role reader or writer (reader when left out), white space around
// an item ignored. EINVALID for an empty header or item, a bad team name or role, a
// team named twice, or more than MaxAssertedTeams teams.
func ParseAssertedTeams(header string) (map[string]graph.Role, error) {
	items := strings.Split(header, ",")
	if len(items) > MaxAssertedTeams {
		return nil, graph.Errorf(graph.EINVALID, "X-Requester-Teams names more than %d teams", MaxAssertedTeams)
	}
	out := make(map[string]graph.Role, len(items))
	for _, item := range items {
		name, role, withRole := strings.Cut(strings.Trim(item, " \t"), ":")
		switch {
		case name == "" && !withRole:
			return nil, graph.Errorf(graph.EINVALID, "X-Requester-Teams must be team or team:role items separated by commas")
		case !graph.ValidID(name):
			return nil, graph.Errorf(graph.EINVALID, "X-Requester-Teams: a team must match ^[a-z0-9][a-z0-9_-]{0,62}$")
		case !withRole:
			role = string(graph.RoleReader)
		case role != string(graph.RoleReader) && role != string(graph.RoleWriter):
			return nil, graph.Errorf(graph.EINVALID, "X-Requester-Teams: the role of team %s must be reader or writer", name)
		}
		if _, twice := out[name]; twice {
			return nil, graph.Errorf(graph.EINVALID, "X-Requester-Teams names team %s twice", name)
		}
		out[name] = graph.Role(role)
	}
	return out, nil
}

// FormatAssertedTeams writes asserted memberships as X-Requester-Teams does, each
// name:role, sorted: how audit events record them.
func FormatAssertedTeams(teams map[string]graph.Role) []string {
	if len(teams) == 0 {
		return nil
	}
	out := make([]string, 0, len(teams))
	for _, t := range sortedKeys(teams) {
		out = append(out, t+":"+string(teams[t]))
	}
	return out
}

// Assert adds the memberships p's host asserts for this request (X-Requester-Teams)
// to p's teams, the higher role winning, and keeps them in Asserted. existing names
// those of the asserted teams that exist. It refuses, with the reason to audit, a
// host that may not assert teams (a confined key, a JWT, a key without
// assert_teams) and any team that does not exist, in the same words whatever the
// reason the team cannot be asserted. Nothing asserted leaves p as it is.
func (p Principal) Assert(teams map[string]graph.Role, existing []string) (Principal, error) {
	if len(teams) == 0 {
		return p, nil
	}
	if !p.Host.AssertTeams {
		return p, fmt.Errorf("host key %s may not assert teams (X-Requester-Teams)", p.Host.Name)
	}
	exists := map[string]bool{}
	for _, t := range existing {
		exists[t] = true
	}
	merged := make(map[string]graph.Role, len(p.Teams)+len(teams))
	for t, r := range p.Teams {
		merged[t] = r
	}
	for _, t := range sortedKeys(teams) {
		role := teams[t]
		if !exists[t] || (role != graph.RoleReader && role != graph.RoleWriter) {
			return p, fmt.Errorf("host key %s may not assert team %s", p.Host.Name, t)
		}
		if merged[t] != graph.RoleWriter {
			merged[t] = role
		}
	}
	p.Teams, p.Asserted = merged, make(map[string]graph.Role, len(teams))
	for t, r := range teams {
		p.Asserted[t] = r
	}
	return p, nil
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
