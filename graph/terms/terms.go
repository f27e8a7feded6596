// Package terms is what text search compares: the stems of words, a stored text's and
// a query's, by the Snowball English stemmer.
package terms

import (
	"github.com/kljensen/snowball/english"

	"github.com/memgate/memgate/graph"
)

// Stem is a lower-cased word's stem, as search compares words: the Porter2 (Snowball
// English) stemmer's, so "activities" and "active" are "activ", "painting" and
// "painted" "paint", "stories" and "story" "stori"; a stop word stays as it is, and
// so does a code of letters and digits.
func Stem(w string) string {
	return english.Stem(w, false)
}

// Of are the stems of text's words (graph.Words, Stem), each occurrence: what search
// matches stored text by (content_terms, fact_terms, name_terms).
func Of(text string) []string {
	out := graph.Words(text)
	for i, w := range out {
		out[i] = Stem(w)
	}
	return out
}

// Query are the terms a search matches a query by: the stems of its words, each
// once, at most 64, without the stop words unless the query has no other.
func Query(text string) []string {
	var all, content []string
	seen := map[string]bool{}
	for _, w := range graph.Words(text) {
		t := Stem(w)
		if seen[t] {
			continue
		}
		seen[t] = true
		all = append(all, t)
		if !graph.StopWord(w) {
			content = append(content, t)
		}
	}
	if len(content) > 0 {
		all = content
	}
	return all[:min(len(all), 64)]
}
