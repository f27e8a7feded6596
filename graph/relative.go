package graph

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// RelativeTime is a relative expression of time in a text ("yesterday", "two weeks
// ago", "next spring", "last Friday") resolved against the text's reference time: the
// span [Start, End) it names, at the precision of Unit, and where it stands in the
// text ([Begin, Finish) in bytes).
type RelativeTime struct {
	Phrase        string
	Begin, Finish int
	Start, End    time.Time
	Unit          TimeUnit
	Approximate   bool // "a few days ago": about Start, not exactly
}

// TimeUnit is how precise a resolved time is.
type TimeUnit string

const (
	UnitDay     TimeUnit = "day"
	UnitWeek    TimeUnit = "week"
	UnitWeekend TimeUnit = "weekend"
	UnitMonth   TimeUnit = "month"
	UnitSeason  TimeUnit = "season"
	UnitYear    TimeUnit = "year"
)

// Words is the resolved time as a block shows it: "7 May 2023", "the week of 1 May
// 2023", "the weekend of 6 May 2023", "May 2023", "spring 2024", "2022"; "about 5 May
// 2023" when approximate.
func (r RelativeTime) Words() string {
	day := func(t time.Time) string { return t.Format("2 January 2006") }
	var w string
	switch r.Unit {
	case UnitDay:
		w = day(r.Start)
	case UnitWeek:
		w = "the week of " + day(r.Start)
	case UnitWeekend:
		w = "the weekend of " + day(r.Start)
	case UnitMonth:
		w = r.Start.Format("January 2006")
	case UnitSeason:
		w = seasonName(r.Start.Month()) + " " + strconv.Itoa(r.Start.Year()) // a winter by the year it begins in
	case UnitYear:
		w = strconv.Itoa(r.Start.Year())
	}
	if r.Approximate {
		w = "about " + w
	}
	return w
}

// numberWords are the counts a relative expression may spell out.
var numberWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2,
	"a few": 3, "few": 3, "several": 3}

var weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
	"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}

// seasons start in these months (the northern hemisphere's): winter runs into the next
// year.
var seasons = map[string]time.Month{"spring": time.March, "summer": time.June, "fall": time.September,
	"autumn": time.September, "winter": time.December}

const count = `(\d{1,3}|a couple of|couple of|a few|few|several|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)`

// relativePattern finds the expressions FindRelativeTimes resolves, longest forms
// first, on word boundaries, in any case.
var relativePattern = regexp.MustCompile(`(?i)\b(?:` + strings.Join([]string{
	`the day before yesterday`, `the day after tomorrow`,
	`yesterday`, `last night`, `tomorrow`, `today`, `tonight`, `this (?:morning|afternoon|evening)`,
	count + ` (day|week|month|year)s? ago`,
	`in ` + count + ` (day|week|month|year)s?`,
	`(last|this|next) (week|weekend|month|year)`,
	`(last|this|next) (monday|tuesday|wednesday|thursday|friday|saturday|sunday)`,
	`(last|this|next) (spring|summer|fall|autumn|winter)`,
}, "|") + `)\b`)

// FindRelativeTimes resolves the relative expressions of time in text against ref (the
// time the text was said), in their order in it. An expression it cannot place (a
// bare weekday, "recently") is left out.
func FindRelativeTimes(text string, ref time.Time) []RelativeTime {
	if ref.IsZero() {
		return nil
	}
	ref = time.Date(ref.Year(), ref.Month(), ref.Day(), 0, 0, 0, 0, time.UTC)
	var out []RelativeTime
	for _, loc := range relativePattern.FindAllStringIndex(text, -1) {
		phrase := text[loc[0]:loc[1]]
		if r, ok := resolveRelative(strings.ToLower(phrase), ref); ok {
			r.Phrase, r.Begin, r.Finish = phrase, loc[0], loc[1]
			out = append(out, r)
		}
	}
	return out
}

// AnnotateTimes is text with each relative expression of time followed by what it
// resolves to against ref, in parentheses: "yesterday (7 May 2023)".
func AnnotateTimes(text string, ref time.Time) string {
	found := FindRelativeTimes(text, ref)
	if len(found) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, r := range found {
		b.WriteString(text[last:r.Finish])
		b.WriteString(" (" + r.Words() + ")")
		last = r.Finish
	}
	b.WriteString(text[last:])
	return b.String()
}

var countedPattern = regexp.MustCompile(`^(?:in )?` + count + ` (day|week|month|year)s?( ago)?$`)

func resolveRelative(p string, ref time.Time) (RelativeTime, bool) {
	day := func(d int) RelativeTime {
		t := ref.AddDate(0, 0, d)
		return RelativeTime{Start: t, End: t.AddDate(0, 0, 1), Unit: UnitDay}
	}
	switch p {
	case "the day before yesterday":
		return day(-2), true
	case "the day after tomorrow":
		return day(2), true
	case "yesterday", "last night":
		return day(-1), true
	case "tomorrow":
		return day(1), true
	case "today", "tonight", "this morning", "this afternoon", "this evening":
		return day(0), true
	}
	if m := countedPattern.FindStringSubmatch(p); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			n = numberWords[m[1]]
		}
		if n <= 0 {
			return RelativeTime{}, false
		}
		if m[3] != "" { // ago
			n = -n
		}
		approximate := strings.Contains(m[1], "few") || m[1] == "several"
		r := span(ref, m[2], n)
		r.Approximate = approximate
		return r, true
	}
	which, what, _ := strings.Cut(p, " ")
	step := map[string]int{"last": -1, "this": 0, "next": 1}[which]
	switch what {
	case "week", "month", "year":
		return span(ref, what, step), true
	case "weekend":
		// This weekend is the one of ref's week (Saturday and Sunday); last and next
		// are a week before and after it.
		sat := ref.AddDate(0, 0, int(time.Saturday)-int(ref.Weekday()))
		if ref.Weekday() == time.Sunday {
			sat = ref.AddDate(0, 0, -1)
		}
		sat = sat.AddDate(0, 0, 7*step)
		return RelativeTime{Start: sat, End: sat.AddDate(0, 0, 2), Unit: UnitWeekend}, true
	}
	if wd, ok := weekdays[what]; ok {
		delta := int(wd) - int(ref.Weekday())
		switch which {
		case "last": // the latest such day before ref
			if delta >= 0 {
				delta -= 7
			}
		case "next": // the first such day after ref
			if delta <= 0 {
				delta += 7
			}
		default: // this: of ref's week, from ref on
			if delta < 0 {
				delta += 7
			}
		}
		return day(delta), true
	}
	if first, ok := seasons[what]; ok {
		// The season ref is in, or the last one before it, as this; last and next a
		// year apart.
		start := time.Date(ref.Year(), first, 1, 0, 0, 0, 0, time.UTC)
		if first == time.December && ref.Month() < time.March {
			start = start.AddDate(-1, 0, 0) // the winter ref is in began last December
		}
		end := start.AddDate(0, 3, 0)
		switch which {
		case "last":
			if !ref.Before(end) { // it is over this year: that one
				break
			}
			start = start.AddDate(-1, 0, 0)
		case "next":
			if ref.Before(start) { // still ahead this year
				break
			}
			start = start.AddDate(1, 0, 0)
		}
		return RelativeTime{Start: start, End: start.AddDate(0, 3, 0), Unit: UnitSeason}, true
	}
	return RelativeTime{}, false
}

// span is the unit (day, week, month, year) n units from ref's.
func span(ref time.Time, unit string, n int) RelativeTime {
	switch unit {
	case "day":
		t := ref.AddDate(0, 0, n)
		return RelativeTime{Start: t, End: t.AddDate(0, 0, 1), Unit: UnitDay}
	case "week": // weeks start on Monday
		monday := ref.AddDate(0, 0, -((int(ref.Weekday())+6)%7)+7*n)
		return RelativeTime{Start: monday, End: monday.AddDate(0, 0, 7), Unit: UnitWeek}
	case "month":
		m := time.Date(ref.Year(), ref.Month()+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
		return RelativeTime{Start: m, End: m.AddDate(0, 1, 0), Unit: UnitMonth}
	}
	y := time.Date(ref.Year()+n, time.January, 1, 0, 0, 0, 0, time.UTC)
	return RelativeTime{Start: y, End: y.AddDate(1, 0, 0), Unit: UnitYear}
}

func seasonName(m time.Month) string {
	switch {
	case m >= time.March && m < time.June:
		return "spring"
	case m >= time.June && m < time.September:
		return "summer"
	case m >= time.September && m < time.December:
		return "fall"
	}
	return "winter"
}

// StatedStart is when a fact extracted from a memory said at ref began, and whether
// that start is assumed (Fact.StartAssumed): the start the extractor gave when it is
// another day than ref's; else a relative time of the fact's text resolved against
// ref ("last weekend", "two days ago"; "today" keeps ref's day, stated); else, with
// none given or only ref's own day, nothing in the text says when, and the start is
// ref, assumed (Graphiti's convention), never ref silently taken as stated.
func StatedStart(text string, given *time.Time, ref time.Time) (time.Time, bool) {
	if given != nil && !sameDay(*given, ref) {
		return *given, false
	}
	if found := FindRelativeTimes(text, ref); len(found) > 0 {
		if given != nil && sameDay(found[0].Start, ref) {
			return *given, false
		}
		return found[0].Start, false
	}
	return ref, true
}

func sameDay(a, b time.Time) bool {
	a, b = a.UTC(), b.UTC()
	return a.Year() == b.Year() && a.YearDay() == b.YearDay()
}
