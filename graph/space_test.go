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

func TestSpace_GroupIDRoundTrip(t *testing.T) {
	spaces := []graph.Space{
		graph.PrivateSpace("alice"), graph.PublicSpace("alice"),
		graph.PrivateSpace("x-public"), graph.PublicSpace("x-private"),
		graph.TeamSpace("research"), graph.TeamSpace("agent-x-private"), graph.GlobalSpace,
		graph.SharedSpace("alice"), graph.SharedSpace("x-shared"), graph.TeamSpace("user-alice-shared"),
		{Kind: graph.SpaceSystem},
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
	for _, bad := range []string{"", "agent-", "agent--private", "agent-X-private", "team-", "team-A", "globals", "agent-a-shared", "user-", "user--shared", "user-a", "user-A-shared", "user-a-shared-x"} {
		if s, ok := graph.ParseGroupID(bad); ok {
			t.Errorf("ParseGroupID(%q) = %+v; want not ok", bad, s)
		}
	}
}
