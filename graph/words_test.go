package graph_test

import (
	"strings"
	"testing"

	"github.com/memgate/memgate/graph"
)

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"Alice works at ACME, Inc.":     "alice works at acme inc",
		"coffee—then coffee… (twice)!":  "coffee then coffee twice",
		"group_id:* OR `x` \\ \x00 'y'": "group id or x y",
		"Zoë visited Kraków in 2024":    "zoë visited kraków in 2024",
		"bad \xff utf-8":                "bad utf 8",
		"   ":                           "",
	} {
		if got := strings.Join(graph.Words(in), " "); got != want {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}
