package extract_test

import (
	"testing"

	"github.com/memgate/memgate/extract"
)

// TestNormalize: names that differ only in case, spacing, surrounding punctuation or
// accents compare equal (issue 31, point 7: a small model wrote Tomás and Tomas); other
// names do not.
func TestNormalize(t *testing.T) {
	for _, same := range [][2]string{{"Tomás Ruiz", "tomas ruiz"}, {"  Zoë  Müller.", "Zoe Muller"}, {"ÅSA", "asa"}, {"Nordvik", "NORDVIK"}} {
		if a, b := extract.Normalize(same[0]), extract.Normalize(same[1]); a != b {
			t.Errorf("%q and %q normalize to %q and %q", same[0], same[1], a, b)
		}
	}
	for _, other := range [][2]string{{"Tomás", "Tomasz"}, {"Ana", "Anna"}} {
		if extract.Normalize(other[0]) == extract.Normalize(other[1]) {
			t.Errorf("%q and %q normalize alike", other[0], other[1])
		}
	}
}
