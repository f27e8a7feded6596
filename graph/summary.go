package graph

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// An entity's summary (Graphiti's Entity.summary) is derived data with one rule, which
// the ingestion pipeline runs when an episode is saved and the store runs again when an
// episode stops supporting the entity (deleted, expired, moved, its content changed):
// what the episodes still mentioning it said of it (its description), then the facts
// about it that hold now. Nothing else goes into a summary, so a summary holds only
// words of the memories it is derived from.

// MaxSummaryRunes bounds an entity's summary; its description takes at most half.
const MaxSummaryRunes = 500

// CleanText is s without invalid UTF-8 and control characters, its runs of white space
// made single spaces, cut to maxRunes runes.
func CleanText(s string, maxRunes int) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxRunes {
		s = string([]rune(s)[:maxRunes])
	}
	return s
}

// machineDate is a date as a machine writes it, "2025-06-01", or with a time of day,
// "2026-11-26T02:18:44Z", with the word before it that makes it a start or a moment.
var machineDate = regexp.MustCompile(`(?i)(?:\b(?:since|from|as of|on|at|starting|beginning)\s+)?\b(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b`)

// SpokenDates is a model's text about an entity or a fact with its dates in words. A
// timestamp with a time of day is the reference time the model was shown, not a date
// anyone said ("employer since 2026-11-26T02:18:44Z" when the text gave no start): it
// goes, with the word before it. A date alone is said in words (DateInWords).
func SpokenDates(s string) string {
	s = machineDate.ReplaceAllStringFunc(s, func(m string) string {
		parts := machineDate.FindStringSubmatch(m)
		if parts[2] != "" {
			return ""
		}
		day, err := time.Parse(time.DateOnly, parts[1])
		if err != nil {
			return m
		}
		return strings.TrimSuffix(m, parts[1]) + DateInWords(day)
	})
	s = strings.Join(strings.Fields(emptyBrackets.ReplaceAllString(s, "")), " ")
	return spaceBeforeMark.ReplaceAllString(s, "$1")
}

var (
	emptyBrackets   = regexp.MustCompile(`\(\s*\)`)
	spaceBeforeMark = regexp.MustCompile(`\s+([.,;:!?)])`)
)

// MergeDescription puts what a newer episode says about an entity before what older
// ones said, without repeating it, cut to half the summary limit (the oldest words go
// first).
func MergeDescription(newer, older string) string {
	switch {
	case newer == "" || strings.Contains(older, newer):
		return older
	case older == "":
		return CleanText(newer, MaxSummaryRunes/2)
	}
	return CleanText(newer+" "+older, MaxSummaryRunes/2)
}

// Description is an entity's description from what each episode mentioning it said of
// it, newest first: the oldest first taken, each newer one merged in front of it
// (MergeDescription), as the pipeline merged them episode by episode.
func Description(said []string) string {
	d := ""
	for i := len(said) - 1; i >= 0; i-- {
		d = MergeDescription(said[i], d)
	}
	return d
}

// EntitySummary is the summary of entity (a uuid): its description, then each fact
// about it that holds now (neither ended, invalid_at, nor expired, expired_at), the
// one that began latest first (valid_at, else created_at; then the newer created_at,
// then the text), each with its stated start in words unless its text says it
// ("Dana works at Acme (since March 2024)."; an assumed start is never said), each
// line once, cut to MaxSummaryRunes. facts may hold ended facts
// and facts about other entities; they are left out.
func EntitySummary(entity, description string, facts []*Fact) string {
	var current []*Fact
	for _, f := range facts {
		if f.InvalidAt == nil && f.ExpiredAt == nil && (f.SourceUUID == entity || f.TargetUUID == entity) {
			current = append(current, f)
		}
	}
	slices.SortStableFunc(current, func(a, b *Fact) int {
		return cmp.Or(heldFrom(b).Compare(heldFrom(a)), b.CreatedAt.Compare(a.CreatedAt), strings.Compare(a.Fact, b.Fact))
	})
	parts := []string{description}
	for _, f := range current {
		line := f.Fact
		if since := f.StatedSince(); since != "" && !strings.Contains(line, strings.TrimPrefix(since, "since ")) {
			line = strings.TrimRight(line, ". ") + " (" + since + ")."
		}
		if !slices.Contains(parts, line) {
			parts = append(parts, line)
		}
	}
	return CleanText(strings.Join(parts, " "), MaxSummaryRunes)
}

// heldFrom is when a fact began holding, or when memgate learned it.
func heldFrom(f *Fact) time.Time {
	if f.ValidAt != nil {
		return *f.ValidAt
	}
	return f.CreatedAt
}
