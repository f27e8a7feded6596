package extract_test

import (
	"slices"
	"testing"

	"github.com/memgate/memgate/extract"
)

// TestDenied: each form of correction yields the phrase it denies, articles aside;
// a bare "not" denies only before "but", and a text that corrects nothing yields none.
func TestDenied(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Correction: Biscuit is a basset hound, not a beagle.", []string{"beagle"}},
		{"We went to Porto instead of Lisbon", []string{"lisbon"}},
		{"I'd take green tea rather than black coffee, thanks", []string{"black coffee"}},
		{"It's not a beagle but a basset hound.", []string{"beagle"}},
		{"I work at Globex, and not at Initech.", []string{"at initech"}},
		{"I am not sure yet.", nil},
		{"I do not work there anymore", nil},
		{"Biscuit is a basset hound.", nil},
	} {
		if got := extract.Denied(c.text); !slices.Equal(got, c.want) {
			t.Errorf("%q: denied %q, want %q", c.text, got, c.want)
		}
	}
}
