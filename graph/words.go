package graph

import (
	"strings"
	"unicode"
)

// Words splits text into the lower-cased words search matches on: runs of letters,
// digits and combining marks; everything else separates. Episodes store their words
// this way (content_terms) and queries are split the same way, so a word followed
// by punctuation or in another case still matches.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(strings.ToValidUTF8(text, " ")), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r)
	})
}

// stopWords are the English words too common to tell memories apart: a query's words
// leave them out (terms.Query).
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but of to in on at for by with from as is are was were be been being it its
		this that these those i you he she we they me him her us them my your his our their what which who whom when where why how
		do does did done have has had not no so if then than there here about into over after before up down out off just also
		very can could would should will shall may might must s t`) {
		stopWords[w] = true
	}
}

// StopWord reports whether w (lower-cased) is one of the words too common to search by.
func StopWord(w string) bool { return stopWords[w] }
