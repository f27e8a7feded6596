package access_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// TestParseAssertedTeams: X-Requester-Teams is read strictly; anything but a list of
// team or team:role items (reader or writer), each team once, is refused.
func TestParseAssertedTeams(t *testing.T) {
	ok := map[string]map[string]graph.Role{
		"x":                   {"x": graph.RoleReader},
		"x:writer":            {"x": graph.RoleWriter},
		"x:reader,y:writer,z": {"x": graph.RoleReader, "y": graph.RoleWriter, "z": graph.RoleReader},
		"x, y:writer":         {"x": graph.RoleReader, "y": graph.RoleWriter},
		" x ":                 {"x": graph.RoleReader},
	}
	for header, want := range ok {
		got, err := access.ParseAssertedTeams(header)
		if err != nil || !maps.Equal(got, want) {
			t.Errorf("ParseAssertedTeams(%q) = %v, %v; want %v", header, got, err, want)
		}
	}
	bad := []string{"", " ", ",", "x,", ",x", "x,,y", "X", "team x", "x:", ":writer", "x:admin", "x:Writer", "x:writer:reader",
		"x,x:writer", "x;y", "-x", "x:reader ,x", strings.Repeat("a", 64), "x\ty"}
	bad = append(bad, strings.Repeat("t,", access.MaxAssertedTeams)+"t")
	var many []string
	for i := 0; i <= access.MaxAssertedTeams; i++ {
		many = append(many, "t"+strings.Repeat("x", i%10)+string(rune('a'+i%26))+strings.Repeat("y", i/26))
	}
	bad = append(bad, strings.Join(many, ","))
	for _, header := range bad {
		if got, err := access.ParseAssertedTeams(header); graph.ErrorCode(err) != graph.EINVALID {
			t.Errorf("ParseAssertedTeams(%q) = %v, %v; want %s", header, got, err, graph.EINVALID)
		}
	}
}

// TestPrincipal_Assert: a host with assert_teams adds existing teams to the
// principal's for the request, the higher role winning; every other host, and any
// team that does not exist, is refused, the principal unchanged.
func TestPrincipal_Assert(t *testing.T) {
	asserting := access.Host{Name: "teams", Trusted: true, AssertTeams: true}
	facts := graph.PrincipalFacts{Teams: map[string]graph.Role{"x": graph.RoleWriter, "y": graph.RoleReader}}
	p := access.NewPrincipal("nina", asserting, facts)
	asserted := map[string]graph.Role{"x": graph.RoleReader, "y": graph.RoleWriter, "z": graph.RoleReader}
	got, err := p.Assert(asserted, []string{"x", "y", "z", "w"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]graph.Role{"x": graph.RoleWriter, "y": graph.RoleWriter, "z": graph.RoleReader}
	if !maps.Equal(got.Teams, want) || !maps.Equal(got.Asserted, asserted) {
		t.Errorf("Assert: teams %v, asserted %v; want %v, %v", got.Teams, got.Asserted, want, asserted)
	}
	if !maps.Equal(p.Teams, facts.Teams) || p.Asserted != nil {
		t.Errorf("Assert changed the principal it was called on: %v, %v", p.Teams, p.Asserted)
	}
	if f := access.FormatAssertedTeams(got.Asserted); !slices.Equal(f, []string{"x:reader", "y:writer", "z:reader"}) {
		t.Errorf("FormatAssertedTeams = %v", f)
	}
	if got, err := p.Assert(nil, nil); err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("Assert(nothing) = %+v, %v; want the principal as it was", got, err)
	}

	refused := map[string]struct {
		host     access.Host
		asserted map[string]graph.Role
	}{
		"a ghost team":          {asserting, map[string]graph.Role{"x": graph.RoleWriter, "ghost": graph.RoleReader}},
		"a confined key":        {access.Host{Name: "plugin", AssertTeams: false}, map[string]graph.Role{"x": graph.RoleReader}},
		"a trusted key without": {access.Host{Name: "agent-host", Trusted: true}, map[string]graph.Role{"x": graph.RoleReader}},
		"a JWT":                 {access.Host{Name: "jwt:nina", Requesters: []string{"nina"}, Subject: "nina"}, map[string]graph.Role{"x": graph.RoleReader}},
		"a role that is none":   {asserting, map[string]graph.Role{"x": "admin"}},
	}
	for name, c := range refused {
		p := access.NewPrincipal("nina", c.host, facts)
		got, err := p.Assert(c.asserted, []string{"x", "y"})
		if err == nil || err.Error() == "" || !reflect.DeepEqual(got, p) {
			t.Errorf("%s: Assert = %+v, %v; want a reason and the principal as it was", name, got, err)
		}
	}
	// Which team cannot be asserted, and why, is not told apart.
	_, ghost := access.NewPrincipal("nina", asserting, facts).Assert(map[string]graph.Role{"ghost": graph.RoleReader}, []string{"x"})
	_, other := access.NewPrincipal("nina", asserting, facts).Assert(map[string]graph.Role{"other": graph.RoleReader}, []string{"x"})
	if strings.ReplaceAll(ghost.Error(), "ghost", "T") != strings.ReplaceAll(other.Error(), "other", "T") {
		t.Errorf("refusals differ beyond the team's name: %q, %q", ghost, other)
	}
}
