package extract

import (
	"regexp"
	"slices"
	"strings"

	"github.com/memgate/memgate/graph"
)

// A correction names what it corrects: "Biscuit is a basset hound, not a beagle",
// "we went to Porto instead of Lisbon", "rather than tea", "not a beagle but a basset
// hound". denials holds those forms; the phrase denied is at most four words after an
// article or possessive, up to the punctuation, "but" or the end that closes it.
var denials = func() []*regexp.Regexp {
	const phrase = `(?:(?:a|an|the|my|his|her|their|our)\s+)?([\p{L}\p{N}][\p{L}\p{N}'’-]*(?:\s+[\p{L}\p{N}][\p{L}\p{N}'’-]*){0,3}?)`
	const closed = `(?:\s*[,.;:!?)]|\s+but\b|\s*$)`
	var out []*regexp.Regexp
	for _, cue := range []string{`,\s*(?:and\s+|but\s+)?not`, `\b(?:instead\s+of|rather\s+than)`, `\bnot`} {
		tail := closed
		if cue == `\bnot` { // a bare "not" corrects only as "not Y but X"
			tail = `\s+but\b`
		}
		out = append(out, regexp.MustCompile(`(?i)`+cue+`\s+`+phrase+tail))
	}
	return out
}()

// Denied are the phrases a memory's text says are not so (denials), normalised.
func Denied(text string) []string {
	var out []string
	for _, d := range denials {
		for _, m := range d.FindAllStringSubmatch(text, -1) {
			p := strings.Join(nameWords(m[1]), " ")
			if p != "" && !graph.StopWord(p) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// corrected are the current facts of stored that the memory's text corrects: facts
// about an entity it names (among entities) whose text says a phrase it denies, as a
// whole word or words. "Correction: Biscuit is a basset hound, not a beagle" corrects
// "adopted a beagle named Biscuit".
func corrected(text string, stored []*graph.Fact, entities []*graph.EntityNode) []*graph.Fact {
	denied := Denied(text)
	if len(denied) == 0 {
		return nil
	}
	named := map[string]bool{}
	for _, e := range entities {
		named[e.UUID] = true
	}
	var out []*graph.Fact
	for _, f := range stored {
		if f.InvalidAt != nil || f.ExpiredAt != nil || !named[f.SourceUUID] && !named[f.TargetUUID] {
			continue
		}
		words := " " + strings.Join(nameWords(f.Fact), " ") + " "
		if slices.ContainsFunc(denied, func(p string) bool { return strings.Contains(words, " "+p+" ") }) {
			out = append(out, f)
		}
	}
	return out
}
