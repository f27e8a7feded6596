package graph_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/memgate/memgate/graph"
)

var (
	documentedID      = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	graphitiGroupID   = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	documentedGroupID = regexp.MustCompile(`^(global|system|team-[a-z0-9][a-z0-9_-]{0,62}|user-[a-z0-9][a-z0-9_-]{0,62}-shared|agent-[a-z0-9][a-z0-9_-]{0,62}-(private|public))$`)
)

// FuzzParseGroupID checks the group_id parser against the documented expressions: a
// group_id it accepts matches them and Graphiti's, and names the one space that gives
// it back; ValidID agrees with the documented id expression.
func FuzzParseGroupID(f *testing.F) {
	for _, s := range []string{"global", "system", "team-x", "agent-a-private", "agent-a-b-public", "agent--private",
		"team-", "user-a-shared", "user--shared", "user-a", "agent-A-private", "agent-a-private-public", "x", "", "team-x\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if graph.ValidID(s) != documentedID.MatchString(s) {
			t.Fatalf("ValidID(%q) = %v, the documented expression says %v", s, graph.ValidID(s), documentedID.MatchString(s))
		}
		space, ok := graph.ParseGroupID(s)
		if !ok {
			if documentedGroupID.MatchString(s) && space.Kind != graph.SpaceSystem {
				t.Fatalf("ParseGroupID refused %q, which the documented expression accepts", s)
			}
			return
		}
		if space.GroupID() != s {
			t.Fatalf("ParseGroupID(%q) = %+v, whose group_id is %q", s, space, space.GroupID())
		}
		if !documentedGroupID.MatchString(s) || !graphitiGroupID.MatchString(s) {
			t.Fatalf("ParseGroupID accepted %q, outside the documented expressions", s)
		}
	})
}

// FuzzWords: the words search counts are lower-case runs of letters, digits and marks,
// never empty, and never hold the space the stored terms are delimited by.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"", "Alice works at ACME, Inc.", "a  b", "\xff", "Zoë", "x_y-z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, w := range graph.Words(text) {
			if w == "" || strings.ContainsAny(w, " \t\n") || w != strings.ToLower(w) {
				t.Fatalf("%q: word %q", text, w)
			}
			for _, r := range w {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) {
					t.Fatalf("%q: word %q holds %q", text, w, r)
				}
			}
		}
	})
}
