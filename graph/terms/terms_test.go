package terms_test

import (
	"strings"
	"testing"

	"github.com/memgate/memgate/graph/terms"
)

// TestQuery: a query's stems, each once, without the stop words unless it has no
// other.
func TestQuery(t *testing.T) {
	for in, want := range map[string]string{
		"What did Caroline research?":                "carolin research",
		"Where does Alice work at Alice's workplace": "alic work workplac",
		"What activities did Melanie's kids enjoy?":  "activ melani kid enjoy",
		"who is it": "who is it",
		"":          "",
	} {
		if got := strings.Join(terms.Query(in), " "); got != want {
			t.Errorf("Query(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOf: every form of a word is one term, and a query's terms are the stored
// text's.
func TestOf(t *testing.T) {
	for in, want := range map[string]string{
		"Painting, painted, paints!":         "paint paint paint",
		"I went running; she runs":           "i went run she run",
		"Stories of a story, falling":        "stori of a stori fall",
		"order A7X-42b, ref markerfce44b971": "order a7x 42b ref markerfce44b971",
		"Activities and activity":            "activ and activ",
		"Zoë visited Kraków in 2024.":        "zoë visit kraków in 2024",
		"go to a tv show":                    "go to a tv show",
	} {
		if got := strings.Join(terms.Of(in), " "); got != want {
			t.Errorf("Of(%q) = %q, want %q", in, got, want)
		}
	}
}
