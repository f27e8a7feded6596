package extract

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/memgate/memgate/graph"
)

// Heuristic is the offline extractor: deterministic rules, no LLM. It finds names
// (runs of capitalised words that are not greetings, pronouns or sentence-initial
// common words), the speaker of a conversation (named by its line, "Dana (user): ...",
// or by an introduction, "I'm Dana Reyes", in this episode or an earlier one; else the
// line's role, "User"), dates of the form "in March 2024", "since 2022" or "as of June
// 2025" (a month without a year, "at the end of May", is the one nearest the
// episode's reference time), and a few common relations: works at, joined, left, lives in, moved to,
// knows, met, likes, married, between names in one sentence or from the speaker in
// the first person ("I joined Globex", "my manager is Bob"). It misses anything
// phrased otherwise and names written in lower case; an LLM does far better.
type Heuristic struct{}

const monthNames = `january|february|march|april|may|june|july|august|september|october|november|december`

var (
	sentenceEnd = regexp.MustCompile(`[.!?\n]+\s*`)
	dateIn      = regexp.MustCompile(`(?i)\b(?:in|since|from|on|as of|starting)\s+(?:(` + monthNames + `)\s+)?((?:1[0-9]|2[0-9])[0-9]{2})\b`)
	// monthPart is "the end of May", "start of March 2024"; monthOnly "since June", a
	// month without a year, the one nearest the reference time.
	monthPart = regexp.MustCompile(`(?i)\b(end|start|beginning|middle)\s+of\s+(` + monthNames + `)(?:\s+((?:1[0-9]|2[0-9])[0-9]{2}))?\b`)
	monthOnly = regexp.MustCompile(`(?i)\b(?:in|since|from|as of|starting|until)\s+(` + monthNames + `)\b`)
	// pronounSubject is a clause whose subject is a pronoun for the sentence's first
	// name: "Erik said that he is leaving Acme".
	pronounSubject = regexp.MustCompile(`(?i)\b(?:he|she|they)(?:'s|’s)?\s+`)
	nameRun        = regexp.MustCompile(`\b[A-Z][\p{L}0-9&'’-]*(?:\s+(?:of\s+)?[A-Z][\p{L}0-9&'’-]*)*`)
	// speakerLine is a conversation line as memgate renders messages: "name (role): "
	// or "role: ".
	speakerLine = regexp.MustCompile(`^\s*(?:([^():\n]{1,64}?)\s+\(([a-z_-]{1,32})\)|([a-z_-]{1,32}))\s*:\s`)
	// introduction names the speaker: "I'm Dana Reyes", "my name is Dana".
	introduction = regexp.MustCompile(`(?i)\b(?:i'm|i’m|i am|my name is|my name's|this is|call me|it's)\s+([A-Z][\p{L}'-]*(?:\s+[A-Z][\p{L}'-]*)*)`)
	// signedIntroduction names the speaker at the start of a message: "Tomás here",
	// "Yusuf Demir.", "Laura Méndez — ...".
	signedIntroduction = regexp.MustCompile(`^(?:(?i:hi|hey|hello|merhaba|hola|aloha)[,!.]*\s+)?([A-Z][\p{L}'-]*(?:\s+[A-Z][\p{L}'-]*)*)(?:\s+here\b|\s*[.,—–-])`)
	// firstPerson is what comes before a name when the speaker is the subject: "I",
	// then adverbs and auxiliaries ("I have just joined", "I recently moved to").
	firstPerson = regexp.MustCompile(`(?i)(?:^|[\s,;:])(?:i|i've|i’ve|i'm|i’m|we|we've|we’ve|we're|we’re)\s+(?:(?:have|has|had|am|are|just|recently|now|finally|also|officially|then)\s+)*(.*)$`)
	// relation rules: a verb phrase between two names (or after "I").
	rules = []struct {
		re       *regexp.Regexp
		relation string
		ends     bool // the phrase says the relation ended ("left")
		srcType  string
		tgtType  string
	}{
		{regexp.MustCompile(`(?i)^\s*(?:works|worked|work|working|is working|started working|started)\s+(?:at|for)\s*$`), "WORKS_AT", false, "Person", "Organization"},
		{regexp.MustCompile(`(?i)^\s*(?:joined|join|joining|was hired by|got hired by|been hired by)\s*$`), "WORKS_AT", false, "Person", "Organization"},
		{regexp.MustCompile(`(?i)^\s*(?:left|quit|resigned from|is leaving|leaving)\s*$`), "WORKS_AT", true, "Person", "Organization"},
		{regexp.MustCompile(`(?i)^\s*(?:lives|lived|live|living|is living)\s+in\s*$`), "LIVES_IN", false, "Person", "Location"},
		{regexp.MustCompile(`(?i)^\s*(?:moved|move|moving|relocated)\s+to\s*$`), "LIVES_IN", false, "Person", "Location"},
		{regexp.MustCompile(`(?i)^\s*(?:knows|know|met|is friends with)\s*$`), "KNOWS", false, "Person", "Person"},
		{regexp.MustCompile(`(?i)^\s*(?:likes|loves|prefers|enjoys|like|love|prefer|enjoy)\s*$`), "LIKES", false, "Person", ""},
		{regexp.MustCompile(`(?i)^\s*(?:married|is married to|am married to)\s*$`), "MARRIED_TO", false, "Person", "Person"},
	}
	// notBefore is the "not" of a negated relation ("live not in"), and butThis what
	// stands between the name it negates and the one that holds instead ("but in").
	notBefore = regexp.MustCompile(`(?i)\s+not(?:\s+|$)`)
	butThis   = regexp.MustCompile(`(?i)^\s*,?\s*but\s+(?:in\s+|at\s+|to\s+|for\s+)?$`)
	// notThis is what stands between a corrected name and the one it replaces: "Globex,
	// not Initech", "Bergen instead of Oslo", "Globex rather than Initech".
	notThis = regexp.MustCompile(`(?i)^\s*,?\s*(?:(?:and\s+|but\s+)?not|instead\s+of|rather\s+than)\s+(?:in\s+|at\s+|to\s+|for\s+)?$`)
	// kin are "my <noun> [is|,] Name": the speaker's relation to Name.
	kin         = regexp.MustCompile(`(?i)\b(?:my|our)\s+(?:new\s+|old\s+|former\s+)?(manager|boss|sister|brother|wife|husband|partner|friend|colleague|dog|cat)(?:'s name)?\s*(?:,|is|was|is called|is named|named|called)?\s*$`)
	kinRelation = map[string]struct{ relation, typ string }{
		"manager": {"REPORTS_TO", "Person"}, "boss": {"REPORTS_TO", "Person"},
		"sister": {"SIBLING_OF", "Person"}, "brother": {"SIBLING_OF", "Person"},
		"wife": {"MARRIED_TO", "Person"}, "husband": {"MARRIED_TO", "Person"}, "partner": {"PARTNER_OF", "Person"},
		"friend": {"KNOWS", "Person"}, "colleague": {"KNOWS", "Person"},
		"dog": {"HAS_PET", ""}, "cat": {"HAS_PET", ""},
	}
	notNames = map[string]bool{}
)

func init() {
	// Words that start a capitalised run without being a name: articles, pronouns and
	// their contractions, greetings, discourse markers and the common words a sentence
	// begins with, months and weekdays, titles.
	for _, w := range strings.Fields(`In On At The A An He She They It We I My Our His Her Their This That These
		Those Yesterday Today Tomorrow Then And But Or So If When While After Before Since From Also Later
		I'm I’m I've I’ve I'd I’d I'll I’ll Me Mine You Your You're We're We've They're It's That's There There's
		Here Here's What What's Who How Why Where Which Whose Let Let's Don't Didn't Can't Won't Isn't
		Hi Hello Hey Dear Thanks Thank Cheers Bye Goodbye Welcome Morning Evening Afternoon Good Great Nice
		Congratulations Congrats Merhaba Hola Aloha Got Want Wanted Anything Everything Nothing Something Glad Noted
		Understood Maybe Perhaps Definitely Probably Absolutely Exactly Totally Really Pretty Quite Very Mostly
		Left Joined Moved Started Went Came Took Made Spent Booked Bought Sold Switched Quit Finished Signed
		Big Small Quick Short Long Little Huge Exciting Sad Happy Fun Funny Oh Ah Well Yes Yeah Yep No Nope Sure
		Okay OK Ok Sorry Please Wow Hmm Btw BTW FYI PS Update Correction Note Reminder News Anyway Actually
		Basically Honestly Finally Unfortunately Luckily Sadly Hopefully Meanwhile Besides However Still
		Just Now Soon Recently Last Next Every Each Some Any All Both Many Most Other Another First Second
		Not Only Even As Of For With Without About To By Do Does Did Is Are Was Were Be Been Being Have Has Had
		Will Would Could Should Can May Might Must Speaking Talking Guess Remember Forgot
		January February March April May June July August September October November December
		Monday Tuesday Wednesday Thursday Friday Saturday Sunday Mr Ms Mrs Dr`) {
		notNames[w] = true
	}
}

func (Heuristic) Extract(_ context.Context, ep *graph.Episode, previous []*graph.Episode) (*graph.Extracted, error) {
	out := &graph.Extracted{}
	types := map[string]string{}
	add := func(name, typ string) {
		if _, seen := types[name]; !seen {
			out.Entities = append(out.Entities, graph.ExtractedEntity{Name: name})
			types[name] = ""
		}
		if typ != "" && types[name] == "" {
			types[name] = typ
		}
	}
	fact := func(src, tgt, relation, sentence string, ends bool, when *time.Time) {
		f := graph.ExtractedFact{Source: src, Target: tgt, Relation: relation, Fact: strings.TrimSpace(sentence)}
		if ends {
			if when == nil { // "I left Acme": ended by the time it was said
				when = &ep.ValidAt
			}
			f.InvalidAt = when
		} else {
			f.ValidAt = when
		}
		out.Facts = append(out.Facts, f)
	}
	introduced := introducedSpeaker(ep, previous)
	said, _ := Retained(ep.Content) // nothing its speaker took back
	for _, line := range strings.Split(said, "\n") {
		if _, role := lineRole(line); role == "assistant" || role == "system" {
			continue // the assistant acknowledges and asks; what the world is, the user says
		}
		speaker, firstPersonCounts := lineSpeaker(line, introduced)
		if m := speakerLine.FindStringIndex(line); m != nil {
			line = line[m[1]:]
		}
		for _, sentence := range sentenceEnd.Split(line, -1) {
			when := sentenceDate(sentence, ep.ValidAt)
			names := findNames(sentence)
			for _, n := range names {
				if n.text == speaker {
					add(n.text, "Person")
				} else {
					add(n.text, "")
				}
			}
			// Relations: between consecutive names, with the subject carried over
			// clauses joined by "and" ("Alice left Acme and joined Globex"); before
			// the first name, the speaker in the first person.
			subject := ""
			var denied graph.ExtractedFact // "live not in Oslo": a fact said not to hold
			for i := range names {
				start := 0
				if i > 0 {
					start = names[i-1].end
				}
				before := sentence[start:names[i].start]
				// A correction: "I work at Globex, not Initech" ends what the previous
				// name's fact would say of this one, as of the episode.
				if last := len(out.Facts) - 1; i > 0 && last >= 0 && notThis.MatchString(before) && out.Facts[last].Target == names[i-1].text {
					prev, now := out.Facts[last], ep.ValidAt
					add(names[i].text, "")
					fact(prev.Source, names[i].text, prev.Relation, sentence, true, &now)
					continue
				}
				// "I live not in Oslo but in Bergen": the name after "but" takes the place
				// of the one the negated fact before it ended.
				if i > 0 && denied.Target == names[i-1].text && butThis.MatchString(before) {
					now := ep.ValidAt
					fact(denied.Source, denied.Target, denied.Relation, sentence, true, &now)
					add(names[i].text, "")
					fact(denied.Source, names[i].text, denied.Relation, sentence, false, when)
					denied = graph.ExtractedFact{}
					continue
				}
				verb := before
				if j := strings.LastIndex(strings.ToLower(before), " and "); j >= 0 {
					verb = before[j+5:]
				} else if i > 0 {
					subject = names[i-1].text
				}
				if m := pronounSubject.FindAllStringIndex(verb, -1); m != nil && i > 0 {
					// "Erik said that he is leaving Acme": the pronoun is the sentence's subject.
					subject, verb = names[0].text, verb[m[len(m)-1][1]:]
				}
				src := subject
				if firstPersonCounts {
					if m := firstPerson.FindStringSubmatch(verb); m != nil {
						src, verb = speaker, m[1]
					} else if m := kin.FindStringSubmatch(before); m != nil && names[i].text != speaker {
						k := kinRelation[strings.ToLower(m[1])]
						add(speaker, "Person")
						add(names[i].text, k.typ)
						fact(speaker, names[i].text, k.relation, sentence, false, when)
						continue
					}
				}
				if src == "" || src == names[i].text {
					continue
				}
				not := notBefore.FindStringIndex(verb)
				if not != nil {
					verb = verb[:not[0]] + " " + verb[not[1]:] // "live not in" is said of "live in"
				}
				for _, r := range rules {
					if r.re.MatchString(verb) {
						add(src, r.srcType)
						add(names[i].text, r.tgtType)
						switch {
						case not == nil:
							fact(src, names[i].text, r.relation, sentence, r.ends, when)
						case !r.ends:
							// Denied: ended as of the memory once a "but" names what holds instead.
							denied = graph.ExtractedFact{Source: src, Target: names[i].text, Relation: r.relation}
						}
						subject = src
						break
					}
				}
			}
		}
	}
	for i := range out.Entities {
		out.Entities[i].Type = types[out.Entities[i].Name]
	}
	return out, nil
}

// introducedSpeaker is the name the speaker gave ("I'm Dana Reyes") in this episode
// or the latest earlier one that has one; "" when none did.
func introducedSpeaker(ep *graph.Episode, previous []*graph.Episode) string {
	for _, e := range append([]*graph.Episode{ep}, previous...) {
		for _, line := range strings.Split(e.Content, "\n") {
			if _, role := lineRole(line); role == "assistant" || role == "system" {
				continue
			}
			text := line
			if m := speakerLine.FindStringIndex(line); m != nil {
				text = line[m[1]:]
			}
			for _, re := range []*regexp.Regexp{introduction, signedIntroduction} {
				if m := re.FindStringSubmatch(text); m != nil {
					if names := findNames(m[1]); len(names) > 0 && names[0].start == 0 && names[0].text == m[1] {
						return names[0].text
					}
				}
			}
		}
	}
	return ""
}

// lineRole reads a conversation line's "name (role): " or "role: " prefix.
func lineRole(line string) (name, role string) {
	m := speakerLine.FindStringSubmatch(line)
	if m == nil {
		return "", ""
	}
	if m[3] != "" {
		return "", m[3]
	}
	return strings.TrimSpace(m[1]), m[2]
}

// lineSpeaker is who "I" is on a line, and whether the line's first person is about
// the world at all: an assistant's or the system's "I" is not.
func lineSpeaker(line, introduced string) (string, bool) {
	name, role := lineRole(line)
	switch {
	case role == "assistant" || role == "system":
		return "", false
	case name != "":
		if names := findNames(name); len(names) == 1 && names[0].text == name {
			return name, true
		}
	}
	if introduced != "" {
		return introduced, true
	}
	if role != "" {
		return strings.ToUpper(role[:1]) + role[1:], true
	}
	return "Speaker", true
}

type span struct {
	text       string
	start, end int
}

func findNames(sentence string) []span {
	var out []span
	for _, m := range nameRun.FindAllStringIndex(sentence, -1) {
		words := strings.Fields(sentence[m[0]:m[1]])
		for len(words) > 0 && notNames[words[0]] { // "In March" / "The Acme" / "Hi Dana"
			m[0] += strings.Index(sentence[m[0]:], words[0]) + len(words[0])
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		// "Dana's manager": the name is Dana.
		last := len(words) - 1
		for _, suffix := range []string{"'s", "’s"} {
			if trimmed, ok := strings.CutSuffix(words[last], suffix); ok && trimmed != "" {
				words[last] = trimmed
				m[1] -= len(suffix)
			}
		}
		if len(words) == 1 && (notNames[words[0]] || (start0(sentence, m[0]) && strings.HasSuffix(words[0], "ly"))) {
			continue // a word the sentence starts with, or an adverb there ("Honestly", "Mostly")
		}
		start := m[0] + strings.Index(sentence[m[0]:], words[0])
		out = append(out, span{text: strings.Join(words, " "), start: start, end: m[1]})
	}
	return out
}

// start0 reports whether only spaces and punctuation come before i in sentence.
func start0(sentence string, i int) bool {
	return strings.TrimLeftFunc(sentence[:i], func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) == ""
}

var months = map[string]time.Month{"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
	"july": 7, "august": 8, "september": 9, "october": 10, "november": 11, "december": 12}

// sentenceDate is the date a sentence says a fact began or ended, or nil: a month or
// year ("in March 2024", "since 2022"), part of a month ("the end of May": its last
// day), a month alone ("as of June"), the occurrence nearest ref, or a relative time
// resolved against ref ("yesterday", "two weeks ago", "last spring": where its span
// starts).
func sentenceDate(sentence string, ref time.Time) *time.Time {
	var t time.Time
	if m := monthPart.FindStringSubmatch(sentence); m != nil {
		month := months[strings.ToLower(m[2])]
		year := nearestYear(month, ref)
		if m[3] != "" {
			year, _ = strconv.Atoi(m[3])
		}
		t = time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
		switch strings.ToLower(m[1]) {
		case "end":
			t = t.AddDate(0, 1, -1)
		case "middle":
			t = t.AddDate(0, 0, 14)
		}
	} else if m := dateIn.FindStringSubmatch(sentence); m != nil {
		year, _ := strconv.Atoi(m[2])
		month := time.January
		if m[1] != "" {
			month = months[strings.ToLower(m[1])]
		}
		t = time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
	} else if m := monthOnly.FindStringSubmatch(sentence); m != nil && !ref.IsZero() {
		month := months[strings.ToLower(m[1])]
		t = time.Date(nearestYear(month, ref), month, 1, 0, 0, 0, 0, time.UTC)
	} else if rel := graph.FindRelativeTimes(sentence, ref); len(rel) > 0 {
		t = rel[0].Start
	} else {
		return nil
	}
	return &t
}

// nearestYear is the year whose month is nearest ref: "January" said in November is
// the coming one, "May" said in June the one just gone.
func nearestYear(month time.Month, ref time.Time) int {
	year := ref.Year()
	switch d := int(month) - int(ref.Month()); {
	case d > 6:
		year--
	case d < -6:
		year++
	}
	return year
}
