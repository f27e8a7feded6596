package config

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// configRow is a row of the key table of docs/configuration.md.
var configRow = regexp.MustCompile("^\\| `([a-z0-9_.]+)` \\| ([^|]*) \\| ([^|]*) \\|")

// TestDocs_Configuration: the table of docs/configuration.md has one row for every key
// of defaults and none for a key memgate does not know; each row names the key's
// environment variable (or says the key is set in the file only, as for the lists) and
// its default as defaults holds it: in code font, or (empty) for an empty string.
func TestDocs_Configuration(t *testing.T) {
	b, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		m := configRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		key, env, def := m[1], strings.TrimSpace(m[2]), strings.TrimSpace(m[3])
		if rows[key] {
			t.Errorf("docs/configuration.md: %s has two rows", key)
		}
		rows[key] = true
		value, known := defaults[key]
		if !known {
			t.Errorf("docs/configuration.md: %s is not a configuration key", key)
			continue
		}
		if _, list := listEntries[key]; list {
			if env != "(file only)" {
				t.Errorf("docs/configuration.md: %s is set in the file only; its env column says %q", key, env)
			}
			continue
		}
		if want := "`MEMGATE_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_")) + "`"; env != want {
			t.Errorf("docs/configuration.md: %s's variable is %s, the table says %q", key, want, env)
		}
		want := "`" + fmt.Sprint(value) + "`"
		if fmt.Sprint(value) == "" {
			want = "(empty)"
		}
		if !strings.HasPrefix(def, want) {
			t.Errorf("docs/configuration.md: %s defaults to %s, the table says %q", key, want, def)
		}
	}
	for key := range defaults {
		if !rows[key] {
			t.Errorf("docs/configuration.md has no row for %s", key)
		}
	}
}
