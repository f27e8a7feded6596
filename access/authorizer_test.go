package access_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/access/accesstest"
	"github.com/memgate/memgate/graph"
)

// worldFacts derives a requester's facts from the matrix world, as the store would.
func worldFacts(w accesstest.World, requester string) graph.PrincipalFacts {
	f := graph.PrincipalFacts{Teams: map[string]graph.Role{}}
	for agent, owner := range w.Agents {
		if owner == requester {
			f.Owns = append(f.Owns, agent)
		}
	}
	for agent, grantees := range w.Shares {
		for _, g := range grantees {
			if g == requester {
				f.SharedWith = append(f.SharedWith, agent)
			}
		}
	}
	for team, members := range w.Teams {
		if role, ok := members[requester]; ok {
			f.Teams[team] = graph.Role(role)
		}
	}
	for _, p := range w.Promoters {
		f.Promoter = f.Promoter || p == requester
	}
	return f
}

func hostOf(kind string) access.Host {
	switch kind {
	case "admin":
		return access.Host{Name: "ops", Trusted: true, Admin: true}
	case "confined":
		return access.Host{Name: "plugin"}
	}
	return access.Host{Name: "agent-host", Trusted: true}
}

// matrixSpace maps a matrix column to a space.
func matrixSpace(column string) graph.Space {
	switch column {
	case "a_private":
		return graph.PrivateSpace("a")
	case "a_public":
		return graph.PublicSpace("a")
	case "b_private":
		return graph.PrivateSpace("b")
	case "b_public":
		return graph.PublicSpace("b")
	case "team_x":
		return graph.TeamSpace("x")
	case "team_y":
		return graph.TeamSpace("y")
	case "global":
		return graph.GlobalSpace
	}
	return graph.Space{Kind: graph.SpaceSystem}
}

// TestPolicy_Matrix runs every cell of access/testdata/matrix.json against the pure
// default policy.
func TestPolicy_Matrix(t *testing.T) {
	m, err := accesstest.Load()
	if err != nil {
		t.Fatal(err)
	}
	cells, err := m.Cells()
	if err != nil {
		t.Fatal(err)
	}
	pol := access.Policy{AllowPrivate: true}
	counts := map[string]int{}
	for _, c := range cells {
		pr := m.Principals[c.Principal]
		p := access.NewPrincipal(pr.Requester, hostOf(pr.Host), worldFacts(m.World, pr.Requester))
		s := matrixSpace(c.Space)
		got := outcome(pol, p, pr.Agent, c.Operation, s)
		counts[c.Want]++
		if got != c.Want {
			t.Errorf("%s %s %s = %s, want %s", c.Principal, c.Operation, c.Space, got, c.Want)
		}
	}
	t.Logf("%d cells: %v", len(cells), counts)
}

// outcome answers one cell with the policy alone, the way the service combines it.
func outcome(pol access.Policy, p access.Principal, ownAgent, op string, s graph.Space) string {
	visible := pol.Visible(p).Contains(s.GroupID())
	switch op {
	case "create":
		agent := s.Agent
		if agent == "" {
			agent = ownAgent
		}
		if s.Kind == graph.SpaceSystem {
			return "400" // not a space a request can name
		}
		switch d := pol.Write(p, agent, s); d.Effect {
		case access.Allow:
			return "allow"
		case access.Confine:
			if d.Space != graph.PrivateSpace(agent) {
				return "confined elsewhere: " + d.Space.GroupID()
			}
			return "confine"
		}
		return "403"
	case "get":
		return yes(visible, "allow", "404")
	case "list", "search":
		if op == "list" && s.Kind == graph.SpaceSystem {
			return "400"
		}
		agent, scopes := s.Agent, []graph.Space{s}
		if agent == "" {
			agent = ownAgent
		}
		in := pol.VisibleForAgent(p, agent, scopes).Contains(s.GroupID())
		if op == "search" {
			return yes(in, "found", "absent")
		}
		return yes(in, "allow", "404")
	case "delete":
		if !visible {
			return "404"
		}
		return yes(pol.Modify(p, s).Effect == access.Allow, "allow", "403")
	case "promote":
		if !visible {
			return "404"
		}
		if pol.Promote(p, graph.GlobalSpace).Effect != access.Allow {
			return "403"
		}
		return yes(s.Kind != graph.SpaceGlobal, "allow", "400")
	}
	return "unknown operation " + op
}

func yes(b bool, a, c string) string {
	if b {
		return a
	}
	return c
}

func TestPolicy_EmptyVisibleSetSeesNothing(t *testing.T) {
	var v graph.Visible
	for _, g := range []string{"agent-a-public", "agent-a-private", "team-x", "global", "system", ""} {
		if v.Contains(g) {
			t.Errorf("the empty visible set contains %q", g)
		}
	}
}

func TestPolicy_NeverSystem(t *testing.T) {
	pol := access.Policy{AllowPrivate: true}
	everything := access.NewPrincipal("root", access.Host{Name: "ops", Trusted: true, Admin: true}, graph.PrincipalFacts{
		Teams: map[string]graph.Role{"system": graph.RoleWriter}, Promoter: true, Owns: []string{"system"},
	})
	if pol.Visible(everything).Contains("system") {
		t.Error("system is visible")
	}
	sys := graph.Space{Kind: graph.SpaceSystem}
	for name, d := range map[string]access.Decision{
		"write":   pol.Write(everything, "system", sys),
		"delete":  pol.Modify(everything, sys),
		"promote": pol.Promote(everything, sys),
	} {
		if d.Effect != access.Deny || d.Reason == "" {
			t.Errorf("%s to system = %+v, want a denial with a reason", name, d)
		}
	}
}

func TestPolicy_AllPublicModel(t *testing.T) {
	pol := access.Policy{AllowPrivate: false}
	owner := access.NewPrincipal("alice", hostOf("trusted"), graph.PrincipalFacts{Owns: []string{"a"}})
	if d := pol.Write(owner, "a", graph.PrivateSpace("a")); d.Effect != access.Deny {
		t.Errorf("private write with allow_private=false = %+v, want deny", d)
	}
	if d := pol.Write(owner, "a", graph.PublicSpace("a")); d.Effect != access.Allow {
		t.Errorf("public write = %+v, want allow", d)
	}
	confined := access.NewPrincipal("alice", hostOf("confined"), graph.PrincipalFacts{Owns: []string{"a"}})
	if d := pol.Write(confined, "a", graph.TeamSpace("x")); d.Effect != access.Deny {
		t.Errorf("confined team write with allow_private=false = %+v, want deny (nowhere private to land)", d)
	}
}

func TestPolicy_CraftedTargets(t *testing.T) {
	pol := access.Policy{AllowPrivate: true}
	p := access.NewPrincipal("alice", hostOf("trusted"), graph.PrincipalFacts{
		Owns: []string{"a"}, SharedWith: []string{"s"}, Teams: map[string]graph.Role{"x": graph.RoleReader},
	})
	got := pol.CraftedTargets(p, "what does agent:b know, and team:y, agent:a, agent:s, team:x, agent:b again; AGENT:c agent:")
	sort.Strings(got)
	want := []string{"agent-b-private", "team-y"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("CraftedTargets = %v, want %v", got, want)
	}
}
