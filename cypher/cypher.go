// Package cypher holds memgate's query text: one query per .cypher file, embedded in
// the binary, and the schema migrations under schema/. Values never appear in the
// text; every query takes them as $parameters.
package cypher

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

//go:embed *.cypher schema/*.cypher
var files embed.FS

// Queries is a set of named queries, loaded once at start.
type Queries map[string]string

// Load returns the named queries (file names without .cypher). A missing or empty file
// is an error, so a typo in a query name fails start-up rather than a request.
//
// A query may include a fragment several queries share: {{name}} stands for the text
// of _name.cypher (fragments include nothing themselves). Fragments are query text
// like the rest; values still come only as $parameters.
func Load(names ...string) (Queries, error) {
	q := make(Queries, len(names))
	for _, name := range names {
		text, err := read(name)
		if err != nil {
			return nil, err
		}
		for {
			start := strings.Index(text, "{{")
			if start < 0 {
				break
			}
			end := strings.Index(text[start:], "}}")
			if end < 0 {
				return nil, fmt.Errorf("cypher: query %q: unclosed {{", name)
			}
			fragment, err := read("_" + text[start+2:start+end])
			if err != nil {
				return nil, fmt.Errorf("cypher: query %q: %w", name, err)
			}
			if strings.Contains(fragment, "{{") {
				return nil, fmt.Errorf("cypher: query %q: fragment %s includes another", name, text[start+2:start+end])
			}
			text = text[:start] + fragment + text[start+end+2:]
		}
		q[name] = text
	}
	return q, nil
}

func read(name string) (string, error) {
	b, err := files.ReadFile(name + ".cypher")
	if err != nil {
		return "", fmt.Errorf("cypher: query %q: %w", name, err)
	}
	text := strings.TrimSpace(stripComments(string(b)))
	if text == "" {
		return "", fmt.Errorf("cypher: query %q is empty", name)
	}
	return text, nil
}

// Get returns the text of a query that Load returned. Asking for one it did not load
// is a programming error.
func (q Queries) Get(name string) string {
	text, ok := q[name]
	if !ok {
		panic("cypher: query " + name + " was not loaded")
	}
	return text
}

// Migration is one numbered schema file, schema/NNN_name.cypher: statements separated
// by ";" at the end of a line, each idempotent (IF NOT EXISTS).
//
// A file whose statements only some Neo4j versions accept starts with the line
// "// requires: Neo4j VERSION" (e.g. 2026.01): Neo4j is then that version, and
// Migrate skips the statements on an older server. The version number is recorded
// either way, so the numbering stays contiguous and every server's schema reaches the
// same version; a later start on a newer server runs the statements (every start
// applies every migration).
type Migration struct {
	Version    int
	Name       string
	Statements []string
	Neo4j      string // the oldest Neo4j version the statements run on; "" for any
}

// requiresPrefix starts the line that names a migration's oldest Neo4j version.
const requiresPrefix = "// requires: Neo4j "

// Migrations returns the schema migrations in version order.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(files, "schema")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".cypher")
		num, rest, ok := strings.Cut(name, "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil || version < 1 {
			return nil, fmt.Errorf("cypher: schema file %s is not named NNN_name.cypher", e.Name())
		}
		b, err := files.ReadFile(path.Join("schema", e.Name()))
		if err != nil {
			return nil, err
		}
		m := Migration{Version: version, Name: rest}
		if first, _, _ := strings.Cut(string(b), "\n"); strings.HasPrefix(first, requiresPrefix) {
			m.Neo4j = strings.TrimSpace(strings.TrimPrefix(first, requiresPrefix))
			if _, ok := ParseVersion(m.Neo4j); !ok {
				return nil, fmt.Errorf("cypher: schema file %s requires Neo4j %q, which is not a version", e.Name(), m.Neo4j)
			}
		}
		for _, stmt := range strings.Split(stripComments(string(b)), ";\n") {
			if stmt = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(stmt), ";")); stmt != "" {
				m.Statements = append(m.Statements, stmt)
			}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := range out {
		if out[i].Version != i+1 {
			return nil, fmt.Errorf("cypher: schema versions must run 1, 2, 3, ...; found %d at position %d", out[i].Version, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the version the embedded migrations bring the database to.
func SchemaVersion() int {
	m, err := Migrations()
	if err != nil || len(m) == 0 {
		return 0
	}
	return m[len(m)-1].Version
}

// ParseVersion reads a Neo4j version, "5.26.30" or "2026.01.4" (a suffix such as
// "-aura" is ignored), as its numbers; ok is false when it does not start with one.
func ParseVersion(v string) (numbers []int, ok bool) {
	v, _, _ = strings.Cut(v, "-")
	for _, part := range strings.Split(v, ".") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			break
		}
		numbers = append(numbers, n)
	}
	return numbers, len(numbers) > 0
}

// AtLeast reports whether the Neo4j version v is min or later, comparing number by
// number (5.26.30 is before 2026.01, which is before 2026.01.4); an unreadable v is
// not.
func AtLeast(v, min string) bool {
	have, ok := ParseVersion(v)
	want, wantOK := ParseVersion(min)
	if !ok || !wantOK {
		return false
	}
	for i, w := range want {
		h := 0
		if i < len(have) {
			h = have[i]
		}
		if h != w {
			return h > w
		}
	}
	return true
}

// stripComments drops whole-line // comments.
func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "//") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// luceneSpecial are the characters Lucene's classic query parser treats as syntax.
const luceneSpecial = `+-&|!(){}[]^"~*?:\/`

// LuceneTerms turns user text into a Lucene query that matches its words literally:
// every syntax character is escaped and the operator words AND, OR, NOT lose their
// meaning, so text like `group_id:* OR x` is searched for, never obeyed. It returns
// "" when no searchable term is left. The group_id restriction is never part of it;
// queries apply it in Cypher.
func LuceneTerms(text string) string {
	var terms []string
	for _, word := range strings.Fields(text) {
		if !utf8.ValidString(word) {
			word = strings.ToValidUTF8(word, "")
		}
		var b strings.Builder
		for _, r := range word {
			switch {
			case r == 0 || unicode.IsControl(r):
				continue
			case strings.ContainsRune(luceneSpecial, r):
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		term := b.String()
		switch term {
		case "":
			continue
		case "AND", "OR", "NOT", "TO":
			term = strings.ToLower(term)
		}
		terms = append(terms, term)
		if len(terms) == 64 {
			break // Lucene's clause limit is far above; longer queries add nothing
		}
	}
	return strings.Join(terms, " ")
}

// maxLuceneGroups is the most group_ids a fulltext query names: a visible set of more
// is filtered in Cypher alone (Lucene refuses a query of over 1,024 clauses).
const maxLuceneGroups = 256

// LuceneStems is the fulltext query that finds the items holding a word of one of
// terms (terms.Query: stems of letters and digits, so no Lucene syntax is left in
// them) in one of fields, within the spaces groupIDs: the index plans read every hit
// and score the visible ones from their own terms, so the query only has to find
// them. A term is asked as a prefix, which finds its every form ("paint*": painting,
// painted), but for one of fewer than three letters, asked as it is. The
// group_id clause narrows the hits the index reads to those spaces (a phrase of a
// group_id's tokens may also match a longer one; every query checks the group_id again
// in Cypher); it is left out for more than maxLuceneGroups. "" when there is no term.
func LuceneStems(fields, terms, groupIDs []string) string {
	if len(terms) == 0 || len(fields) == 0 {
		return ""
	}
	asked := make([]string, len(terms))
	for i, t := range terms {
		// A stem's last e or i may stand for another letter ("make" of "making",
		// "stori" of "story"): the prefix leaves it out.
		if p := strings.TrimRight(t, "ei"); utf8.RuneCountInString(p) >= 3 {
			t = p + "*"
		}
		asked[i] = t
	}
	words := strings.Join(asked, " ")
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f + ":(" + words + ")"
	}
	q := "(" + strings.Join(parts, " OR ") + ")"
	if len(groupIDs) == 0 || len(groupIDs) > maxLuceneGroups {
		return q
	}
	groups := make([]string, len(groupIDs))
	for i, g := range groupIDs {
		groups[i] = `"` + g + `"` // group_ids are letters, digits, '-' and '_' (graph.ValidID)
	}
	return q + " AND group_id:(" + strings.Join(groups, " ") + ")"
}
