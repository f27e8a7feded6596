package cypher_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memgate/memgate/cypher"
)

func TestLoad(t *testing.T) {
	q, err := cypher.Load("schema_version_get")
	if err != nil {
		t.Fatal(err)
	}
	if text := q.Get("schema_version_get"); strings.Contains(text, "//") || !strings.Contains(text, "MemgateSchema") {
		t.Fatalf("query text = %q, want the statement without comments", text)
	}
}

func TestLoad_ErrMissing(t *testing.T) {
	if _, err := cypher.Load("schema_version_get", "no_such_query"); err == nil || !strings.Contains(err.Error(), "no_such_query") {
		t.Fatalf("Load of a missing query = %v, want an error naming it", err)
	}
}

func TestMigrations(t *testing.T) {
	ms, err := cypher.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || cypher.SchemaVersion() != ms[len(ms)-1].Version {
		t.Fatalf("SchemaVersion %d does not match the migrations %+v", cypher.SchemaVersion(), ms)
	}
	for _, m := range ms {
		for _, stmt := range m.Statements {
			if !strings.Contains(stmt, "IF NOT EXISTS") && !(strings.HasPrefix(stmt, "DROP ") && strings.HasSuffix(stmt, " IF EXISTS")) {
				t.Errorf("%03d_%s: statement is not idempotent: %s", m.Version, m.Name, stmt)
			}
			if strings.Contains(stmt, ";") {
				t.Errorf("%03d_%s: statement was not split: %s", m.Version, m.Name, stmt)
			}
		}
	}
}

func TestLuceneTerms(t *testing.T) {
	cases := map[string]string{
		"alice acme":            "alice acme",
		"group_id:*":            `group_id\:\*`,
		"a OR b AND NOT c":      "a or b and not c",
		`"quoted" (x) [y] {z}`:  `\"quoted\" \(x\) \[y\] \{z\}`,
		`back\slash`:            `back\\slash`,
		"a && b || !c":          `a \&\& b \|\| \!c`,
		"  ":                    "",
		"nul\x00byte":           "nulbyte",
		"fuzzy~2 boost^3 wild?": `fuzzy\~2 boost\^3 wild\?`,
		"/regex/":               `\/regex\/`,
		"+must -not":            `\+must \-not`,
	}
	for in, want := range cases {
		if got := cypher.LuceneTerms(in); got != want {
			t.Errorf("LuceneTerms(%q) = %q, want %q", in, got, want)
		}
	}
	if got := cypher.LuceneTerms("\xff\xfe ok"); got != "ok" {
		t.Errorf("invalid UTF-8: %q", got)
	}
}

func TestAtLeast(t *testing.T) {
	for _, c := range []struct {
		v, min string
		want   bool
	}{
		{"5.26.30", "2026.01", false},
		{"2026.01.4", "2026.01", true},
		{"2026.01", "2026.01", true},
		{"2025.12.1", "2026.01", false},
		{"2026.02.0-aura", "2026.01", true},
		{"2027.1", "2026.01", true},
		{"5.26.30", "5.26", true},
		{"5.9", "5.26", false},
		{"", "2026.01", false},
		{"enterprise", "2026.01", false},
	} {
		if got := cypher.AtLeast(c.v, c.min); got != c.want {
			t.Errorf("AtLeast(%q, %q) = %v, want %v", c.v, c.min, got, c.want)
		}
	}
}

// TestLuceneStems: each term is asked as a prefix, without a last e or i that may
// stand for another letter, but for one left with fewer than three letters; the group_ids narrow the hits, up to maxLuceneGroups of them.
func TestLuceneStems(t *testing.T) {
	if got, want := cypher.LuceneStems([]string{"content"}, []string{"paint", "tv", "run", "make", "stori", "die"}, []string{"agent-a-private"}),
		`(content:(paint* tv run* mak* stor* die)) AND group_id:("agent-a-private")`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := cypher.LuceneStems([]string{"name", "fact"}, []string{"held"}, nil), `(name:(held*) OR fact:(held*))`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := cypher.LuceneStems([]string{"content"}, nil, []string{"g"}); got != "" {
		t.Errorf("no terms: %q, want none", got)
	}
	many := make([]string, 257)
	for i := range many {
		many[i] = fmt.Sprintf("agent-%d-private", i)
	}
	if got := cypher.LuceneStems([]string{"content"}, []string{"paint"}, many); strings.Contains(got, "group_id") {
		t.Errorf("more than 256 spaces named in the query: %.80s", got)
	}
}
