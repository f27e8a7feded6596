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

func TestRetained(t *testing.T) {
	for _, c := range []struct {
		text, kept string
		earlier    bool // the speaker's previous memory is taken back
	}{
		{"I'm moving to Denver, scratch that, to Austin.", "to Austin.", false},
		{"I live in Lisbon. Scratch that. I live in Porto.", "I live in Porto.", false},
		{"I work at Initech. I live in Porto, strike that, in Braga. Ignore that!", "I work at Initech. ", false},
		{"Dana (user): I live in Lisbon.\nassistant: Noted.\nDana (user): Oh wait, scratch that: I live in Porto.",
			"Dana (user): \nassistant: Noted.\nDana (user): I live in Porto.", false},
		{"Dana (user): I live in Lisbon.\nI have a cat. I work at Globex.\nassistant: Noted.\nDana (user): Forget what I said!",
			"Dana (user): I live in Lisbon.\nI have a cat. \nassistant: Noted.\nDana (user): ", false},
		{"I live in Lisbon.\nI work at Globex.\nI take that back.", "I live in Lisbon.\n\n", false},
		// Opening the memory: what the speaker said before it.
		{"Scratch that, I live in Porto.", "I live in Porto.", true},
		{"Dana (user): Please ignore that.", "Dana (user): ", true},
		{"assistant: Sure.\nDana (user): Sorry, disregard what I just said - Porto.", "assistant: Sure.\nDana (user): Porto.", true},
		// Not retractions.
		{"I need to scratch that itch and ignore that email.", "I need to scratch that itch and ignore that email.", false},
		{"I live in Porto.", "I live in Porto.", false},
	} {
		kept, earlier := extract.Retained(c.text)
		if kept != c.kept || (earlier != "") != c.earlier {
			t.Errorf("%q: kept %q, earlier %q; want %q, earlier %v", c.text, kept, earlier, c.kept, c.earlier)
		}
	}
}
