package cypher_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/memgate/memgate/cypher"
)

// FuzzLuceneTerms: whatever the text, the query LuceneTerms builds has every Lucene
// syntax character escaped, no operator word, no control character, and valid UTF-8,
// so it is searched for and never obeyed.
func FuzzLuceneTerms(f *testing.F) {
	for _, s := range []string{"", "alice", "group_id:*", `a\b`, `"x" AND y OR NOT z`, "TO", "(a) [b] {c}", "~^!?*", "\x00\xff", "é ü 中文"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		q := cypher.LuceneTerms(text)
		if !utf8.ValidString(q) {
			t.Fatalf("%q: invalid UTF-8 %q", text, q)
		}
		for _, term := range strings.Split(q, " ") {
			switch term {
			case "AND", "OR", "NOT", "TO":
				t.Fatalf("%q: operator %q left in %q", text, term, q)
			}
			escaped := false
			for _, r := range term {
				switch {
				case unicode.IsControl(r) || r == 0:
					t.Fatalf("%q: control character in %q", text, q)
				case escaped:
					escaped = false
				case r == '\\':
					escaped = true
				case strings.ContainsRune(`+-&|!(){}[]^"~*?:/`, r):
					t.Fatalf("%q: unescaped %q in %q", text, r, q)
				}
			}
			if escaped {
				t.Fatalf("%q: a term ends with a lone backslash in %q", text, q)
			}
		}
	})
}
