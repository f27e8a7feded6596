package extract

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/memgate/memgate/graph"
)

// Heuristic is the offline extractor: deterministic rules, no LLM. It finds names
// (runs of capitalised words), dates of the form "in March 2024" or "in 2024", and a
// few common relations between names in one sentence: works at, joined, left, lives
// in, moved to, knows, met, likes, married. It misses anything phrased otherwise,
// pronouns, and names written in lower case; an LLM does far better.
type Heuristic struct{}

var (
	sentenceEnd = regexp.MustCompile(`[.!?\n]+\s*`)
	dateIn      = regexp.MustCompile(`(?i)\b(?:in|since|from|on)\s+(?:(january|february|march|april|may|june|july|august|september|october|november|december)\s+)?((?:1[0-9]|2[0-9])[0-9]{2})\b`)
	nameRun     = regexp.MustCompile(`\b[A-Z][\p{L}0-9&'-]*(?:\s+(?:of\s+)?[A-Z][\p{L}0-9&'-]*)*`)
	// relation rules: a verb phrase between two names.
	rules = []struct {
		re       *regexp.Regexp
		relation string
		ends     bool // the phrase says the relation ended ("left")
		srcType  string
		tgtType  string
	}{
		{regexp.MustCompile(`(?i)^\s*(?:works|worked|is working|started working)\s+(?:at|for)\s*$`), "WORKS_AT", false, "Person", "Organization"},
		{regexp.MustCompile(`(?i)^\s*(?:joined|was hired by)\s*$`), "WORKS_AT", false, "Person", "Organization"},
		{regexp.MustCompile(`(?i)^\s*(?:left|quit|resigned from)\s*$`), "WORKS_AT", true, "Person", "Organization"},
		{regexp.MustCompile(`(?i)^\s*(?:lives|lived|is living)\s+in\s*$`), "LIVES_IN", false, "Person", "Location"},
		{regexp.MustCompile(`(?i)^\s*(?:moved|relocated)\s+to\s*$`), "LIVES_IN", false, "Person", "Location"},
		{regexp.MustCompile(`(?i)^\s*(?:knows|met|is friends with)\s*$`), "KNOWS", false, "Person", "Person"},
		{regexp.MustCompile(`(?i)^\s*(?:likes|loves|prefers|enjoys)\s*$`), "LIKES", false, "Person", ""},
		{regexp.MustCompile(`(?i)^\s*(?:married|is married to)\s*$`), "MARRIED_TO", false, "Person", "Person"},
	}
	notNames = map[string]bool{}
)

func init() {
	for _, w := range strings.Fields(`In On At The A An He She They It We I My Our His Her Their This That These
		Those Yesterday Today Tomorrow Then And But Or So If When While After Before Since From Also Later
		January February March April May June July August September October November December
		Monday Tuesday Wednesday Thursday Friday Saturday Sunday Mr Ms Mrs Dr`) {
		notNames[w] = true
	}
}

func (Heuristic) Extract(_ context.Context, ep *graph.Episode, _ []*graph.Episode) (*graph.Extracted, error) {
	out := &graph.Extracted{}
	types := map[string]string{}
	add := func(name, typ string) {
		if _, seen := types[name]; !seen {
			out.Entities = append(out.Entities, graph.ExtractedEntity{Name: name})
		}
		if typ != "" && types[name] == "" {
			types[name] = typ
		}
		if _, seen := types[name]; !seen {
			types[name] = ""
		}
	}
	for _, sentence := range sentenceEnd.Split(ep.Content, -1) {
		if strings.Contains(sentence, ": ") { // "alice (user): text" lines of a conversation
			sentence = sentence[strings.Index(sentence, ": ")+2:]
		}
		when := sentenceDate(sentence)
		names := findNames(sentence)
		for _, n := range names {
			add(n.text, "")
		}
		// Relations: between consecutive names, with the subject carried over
		// clauses joined by "and" ("Alice left Acme and joined Globex").
		subject := ""
		for i := 0; i+1 < len(names); i++ {
			between := sentence[names[i].end:names[i+1].start]
			verb := between
			if j := strings.LastIndex(strings.ToLower(between), " and "); j >= 0 {
				verb = between[j+5:]
			} else {
				subject = names[i].text
			}
			if subject == "" {
				subject = names[i].text
			}
			for _, r := range rules {
				if !r.re.MatchString(verb) {
					continue
				}
				src := subject
				if src == names[i+1].text {
					break
				}
				f := graph.ExtractedFact{Source: src, Target: names[i+1].text, Relation: r.relation,
					Fact: strings.TrimSpace(sentence)}
				if r.ends {
					f.InvalidAt = when
				} else {
					f.ValidAt = when
				}
				add(src, r.srcType)
				add(names[i+1].text, r.tgtType)
				out.Facts = append(out.Facts, f)
				break
			}
		}
	}
	for i := range out.Entities {
		out.Entities[i].Type = types[out.Entities[i].Name]
	}
	return out, nil
}

type span struct {
	text       string
	start, end int
}

func findNames(sentence string) []span {
	var out []span
	for _, m := range nameRun.FindAllStringIndex(sentence, -1) {
		words := strings.Fields(sentence[m[0]:m[1]])
		for len(words) > 0 && notNames[words[0]] { // "In March" / "The Acme"
			m[0] += strings.Index(sentence[m[0]:], words[0]) + len(words[0])
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		start := m[0] + strings.Index(sentence[m[0]:], words[0])
		out = append(out, span{text: strings.Join(words, " "), start: start, end: m[1]})
	}
	return out
}

var months = map[string]time.Month{"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
	"july": 7, "august": 8, "september": 9, "october": 10, "november": 11, "december": 12}

func sentenceDate(sentence string) *time.Time {
	m := dateIn.FindStringSubmatch(sentence)
	if m == nil {
		return nil
	}
	year, _ := strconv.Atoi(m[2])
	month := time.January
	if m[1] != "" {
		month = months[strings.ToLower(m[1])]
	}
	t := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
	return &t
}
