package graph_test

import (
	"strings"
	"testing"

	"github.com/memgate/memgate/graph"
)

func TestValidID(t *testing.T) {
	max := "a" + strings.Repeat("b", 62)
	for _, ok := range []string{"a", "agent-1", "x_y", "0abc", "a--", max} {
		if !graph.ValidID(ok) {
			t.Errorf("ValidID(%q) = false", ok)
		}
	}
	long := max + "c"
	for _, bad := range []string{"", "-a", "_a", "A", "a b", "a.b", "a/b", "agent:x", "é", long, "a\x00", "a\n"} {
		if graph.ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

func TestOrg_Prefix(t *testing.T) {
	if got := graph.DefaultOrg.Global().GroupID(); got != "global" {
		t.Errorf("the implicit organization's global space is %q; want today's bare global", got)
	}
	if got := graph.Org("acme").Private("a").GroupID(); got != "org-acme_agent-a-private" {
		t.Errorf("acme's private space of a is %q", got)
	}
	for _, bad := range []string{"", "a_b", "A", "-a", "a.b", strings.Repeat("a", 32)} {
		if graph.CheckOrg("org", bad) == nil {
			t.Errorf("CheckOrg(%q) = nil; want an error", bad)
		}
	}
}

func TestSpace_GroupIDRoundTrip(t *testing.T) {
	var spaces []graph.Space
	// The same names in the implicit organization and in two named ones, one of whose
	// names is a prefix of the other's, never share a group_id.
	for _, o := range []graph.Org{graph.DefaultOrg, "acme", "acme-eu", "org-x"} {
		spaces = append(spaces,
			o.Private("alice"), o.Public("alice"),
			o.Private("x-public"), o.Public("x-private"),
			o.Team("research"), o.Team("agent-x-private"), o.Global(),
			o.Shared("alice"), o.Shared("x-shared"), o.Team("user-alice-shared"),
			o.System(), o.Team("org-acme"), o.Private("org-acme"))
	}
	seen := map[string]graph.Space{}
	for _, s := range spaces {
		g := s.GroupID()
		if prev, dup := seen[g]; dup {
			t.Errorf("%+v and %+v share group_id %s", prev, s, g)
		}
		seen[g] = s
		back, ok := graph.ParseGroupID(g)
		if !ok || back != s {
			t.Errorf("ParseGroupID(%q) = %+v, %v; want %+v", g, back, ok, s)
		}
	}
	for _, bad := range []string{"", "agent-", "agent--private", "agent-X-private", "team-", "team-A", "globals", "agent-a-shared", "user-", "user--shared", "user-a", "user-A-shared", "user-a-shared-x",
		"org-", "org-acme", "org-acme_", "org-_global", "org-ACME_global", "org-a_b_global", "org-acme_org-acme_global"} {
		if s, ok := graph.ParseGroupID(bad); ok {
			t.Errorf("ParseGroupID(%q) = %+v; want not ok", bad, s)
		}
	}
}
