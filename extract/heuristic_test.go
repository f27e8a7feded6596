package extract_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
)

func TestHeuristic(t *testing.T) {
	extract1 := func(text string) *graph.Extracted {
		x, err := extract.Heuristic{}.Extract(context.Background(), &graph.Episode{Content: text}, nil)
		if err != nil {
			t.Fatal(err)
		}
		clean, _ := extract.Clean(x, extract.DefaultEntityTypes)
		return clean
	}

	x := extract1("Alice works at Acme as an engineer.")
	if len(x.Entities) != 2 || x.Entities[0].Name != "Alice" || x.Entities[0].Type != "Person" ||
		x.Entities[1].Name != "Acme" || x.Entities[1].Type != "Organization" {
		t.Fatalf("entities = %+v", x.Entities)
	}
	if len(x.Facts) != 1 || x.Facts[0].Relation != "WORKS_AT" || x.Facts[0].Source != "Alice" || x.Facts[0].Target != "Acme" {
		t.Fatalf("facts = %+v", x.Facts)
	}

	x = extract1("In March 2024 Alice left Acme and joined Globex.")
	march := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	if len(x.Facts) != 2 {
		t.Fatalf("facts = %+v, want left Acme and joined Globex", x.Facts)
	}
	left, joined := x.Facts[0], x.Facts[1]
	if left.Target != "Acme" || left.InvalidAt == nil || !left.InvalidAt.Equal(march) || left.ValidAt != nil {
		t.Errorf("left = %+v, want WORKS_AT Acme ending 2024-03", left)
	}
	if joined.Source != "Alice" || joined.Target != "Globex" || joined.ValidAt == nil || !joined.ValidAt.Equal(march) {
		t.Errorf("joined = %+v, want Alice WORKS_AT Globex from 2024-03", joined)
	}
	for _, e := range x.Entities {
		if e.Name == "March" || e.Name == "In" {
			t.Errorf("%q taken for a name", e.Name)
		}
	}

	if x := extract1("the weather was nice and nothing happened"); len(x.Entities) != 0 || len(x.Facts) != 0 {
		t.Errorf("lower-case text gave %+v", x)
	}
}

func TestClean(t *testing.T) {
	valid := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	early := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	absurd := time.Date(40000, 1, 1, 0, 0, 0, 0, time.UTC)
	long := make([]byte, 5000)
	for i := range long {
		long[i] = 'x'
	}
	x, drops := extract.Clean(&graph.Extracted{
		Entities: []graph.ExtractedEntity{
			{Name: "  Alice\x00\n Smith ", Type: "person", Summary: string(long)},
			{Name: "alice smith", Type: "Person"}, // duplicate by normalized name
			{Name: "Robert'); MATCH (n) DETACH DELETE n //", Type: "Hacker`:Admin"},
			{Name: "   "},
			{Name: "Acme", Type: "Organization"},
		},
		Facts: []graph.ExtractedFact{
			{Source: "Alice Smith", Target: "Acme", Relation: "works at", Fact: "", ValidAt: &valid, InvalidAt: &early},
			{Source: "Alice Smith", Target: "Nobody", Relation: "KNOWS"},
			{Source: "Acme", Target: "Acme", Relation: "IS"},
			{Source: "Acme", Target: "alice smith", Relation: "`]->() DELETE x //", ValidAt: &absurd},
			{Source: "Acme", Target: "alice smith", Relation: "employs", ValidAt: &absurd},
		},
	}, extract.DefaultEntityTypes)
	if len(x.Entities) != 3 {
		t.Fatalf("entities = %+v", x.Entities)
	}
	if x.Entities[0].Name != "Alice Smith" || x.Entities[0].Type != "Person" || len([]rune(x.Entities[0].Summary)) != 500 {
		t.Errorf("first entity = %q %q (%d)", x.Entities[0].Name, x.Entities[0].Type, len(x.Entities[0].Summary))
	}
	if x.Entities[1].Type != "" {
		t.Errorf("an unknown type became label %q", x.Entities[1].Type)
	}
	if len(x.Facts) != 2 {
		t.Fatalf("facts = %+v", x.Facts)
	}
	if f := x.Facts[0]; f.Relation != "WORKS_AT" || f.Fact == "" || f.InvalidAt != nil || f.ValidAt == nil {
		t.Errorf("fact = %+v, want WORKS_AT with a sentence and no invalid_at before valid_at", f)
	}
	if f := x.Facts[1]; f.Relation != "EMPLOYS" || f.ValidAt != nil || f.Target != "Alice Smith" {
		t.Errorf("fact = %+v, want EMPLOYS without the absurd date", f)
	}
	var reasons []string
	for _, d := range drops {
		reasons = append(reasons, d.What+"/"+d.Reason)
	}
	if got := strings.Join(reasons, " "); got != "entity/empty_name fact/unknown_entity fact/same_entity fact/bad_relation" {
		t.Errorf("drops %s", got)
	}
}

// TestClean_Salvage: a fact whose end is a listed entity with markup or a role around
// it, or a part of one entity's name, is kept on that entity; an end that could be
// either of two entities is not guessed.
func TestClean_Salvage(t *testing.T) {
	x, drops := extract.Clean(&graph.Extracted{
		Entities: []graph.ExtractedEntity{{Name: "Dana Reyes"}, {Name: "Globex"}, {Name: "Bob Stone"}, {Name: "Bob Marley"}},
		Facts: []graph.ExtractedFact{
			{Source: "Dana Reyes (user)", Target: "<b>Globex</b>", Relation: "WORKS_AT"},
			{Source: "Dana", Target: "Bob Stone", Relation: "REPORTS_TO"},
			{Source: "Dana Reyes", Target: "Bob", Relation: "KNOWS"},
			{Source: "<current_episode>", Target: "Globex", Relation: "MENTIONS"},
		},
	}, nil)
	var kept []string
	for _, f := range x.Facts {
		kept = append(kept, f.Source+" "+f.Relation+" "+f.Target)
	}
	if got := strings.Join(kept, "; "); got != "Dana Reyes WORKS_AT Globex; Dana Reyes REPORTS_TO Bob Stone" {
		t.Errorf("kept: %s", got)
	}
	if len(drops) != 2 || drops[0].Reason != "unknown_entity" || drops[1].Reason != "unknown_entity" {
		t.Errorf("drops %+v, want the ambiguous Bob and the markup, as unknown_entity", drops)
	}
}

func TestHashing(t *testing.T) {
	h := extract.Hashing{Dimensions: 256}
	v, _ := h.Embed(context.Background(), []string{"Alice works at Acme", "Alice is employed at Acme", "tomato garden recipe"})
	if len(v[0]) != 256 {
		t.Fatalf("dimension %d", len(v[0]))
	}
	near, far := graph.Cosine(v[0], v[1]), graph.Cosine(v[0], v[2])
	if near <= far || near < 0.4 {
		t.Fatalf("similar texts %.2f, unrelated %.2f", near, far)
	}
	again, _ := h.Embed(context.Background(), []string{"Alice works at Acme"})
	if graph.Cosine(v[0], again[0]) < 0.9999 {
		t.Fatal("not deterministic")
	}
}

// TestHeuristic_Conversation: a conversation as memgate renders messages. Greetings,
// pronouns and discourse markers are no entities; the speaker, named by an
// introduction in an earlier episode, is the subject of the first person; the
// assistant's lines give nothing (its acknowledgements are no facts); "as of"
// dates a fact.
func TestHeuristic_Conversation(t *testing.T) {
	earlier := &graph.Episode{Content: "user: Hi! I'm Dana Reyes, nice to meet you.\nassistant: Hello Dana, I'm glad to help.\n"}
	ep := &graph.Episode{Content: "user: Big news: as of June 2025 I joined Globex. Correction: I left Initech in May 2025.\n" +
		"user: My manager is Bob Stone. My sister Carol lives in Lisbon.\n" +
		"user: Oh, and my dog's name is Rex.\n" +
		"assistant: Thanks, I'm noting that. I work for Acme Assistants.\n"}
	x, err := extract.Heuristic{}.Extract(context.Background(), ep, []*graph.Episode{earlier})
	if err != nil {
		t.Fatal(err)
	}
	x, _ = extract.Clean(x, extract.DefaultEntityTypes)
	var names []string
	for _, e := range x.Entities {
		names = append(names, e.Name+"/"+e.Type)
	}
	want := "Globex/Organization Dana Reyes/Person Initech/Organization Bob Stone/Person Carol/Person Lisbon/Location Rex/"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("entities:\n got %s\nwant %s", got, want)
	}
	june, may := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	type fact struct {
		src, rel, tgt  string
		valid, invalid *time.Time
	}
	wantFacts := []fact{
		{"Dana Reyes", "WORKS_AT", "Globex", &june, nil},
		{"Dana Reyes", "WORKS_AT", "Initech", nil, &may},
		{"Dana Reyes", "REPORTS_TO", "Bob Stone", nil, nil},
		{"Dana Reyes", "SIBLING_OF", "Carol", nil, nil},
		{"Carol", "LIVES_IN", "Lisbon", nil, nil},
		{"Dana Reyes", "HAS_PET", "Rex", nil, nil},
	}
	if len(x.Facts) != len(wantFacts) {
		t.Fatalf("facts = %+v, want %d (none from the assistant's first person)", x.Facts, len(wantFacts))
	}
	same := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	for i, w := range wantFacts {
		f := x.Facts[i]
		if f.Source != w.src || f.Relation != w.rel || f.Target != w.tgt || !same(f.ValidAt, w.valid) || !same(f.InvalidAt, w.invalid) {
			t.Errorf("fact %d = %s %s %s (%v, %v), want %+v", i, f.Source, f.Relation, f.Target, f.ValidAt, f.InvalidAt, w)
		}
	}
}

// TestHeuristic_NoJunk: greetings, pronouns, discourse markers and common words at the
// start of a sentence never become entities.
func TestHeuristic_NoJunk(t *testing.T) {
	text := "Hi there! Hello. Hey, thanks. I'm fine. I've been busy. Big news: nothing. Correction: nope. " +
		"Update: still nothing. Oh well. Good morning. Anyway, it's late. Sorry! Yesterday was long. " +
		"Great, let's go. Actually no. Just kidding. Btw it rained. Okay. Last week was quiet."
	x, err := extract.Heuristic{}.Extract(context.Background(), &graph.Episode{Content: "user: " + text}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Entities) != 0 || len(x.Facts) != 0 {
		t.Fatalf("junk: %+v", x)
	}
}

// TestHeuristic_SignedIntroduction: a speaker who signs a message ("Tomás here",
// "Merhaba! Yusuf Demir.") is named by it; a name starting a sentence about someone
// else is not taken for the speaker's.
func TestHeuristic_SignedIntroduction(t *testing.T) {
	for text, want := range map[string]string{
		"user: hey, Tomás Alvarez here. I live in Lisbon.":       "Tomás Alvarez LIVES_IN Lisbon",
		"user: Merhaba! Yusuf Demir. I work at Charité.":         "Yusuf Demir WORKS_AT Charité",
		"user: Ama loved Accra. I live in Kumasi.":               "User LIVES_IN Kumasi",
		"user: Thanks, that helps. I moved to Porto last month.": "User LIVES_IN Porto",
	} {
		x, err := extract.Heuristic{}.Extract(context.Background(), &graph.Episode{Content: text}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range x.Facts {
			got = append(got, f.Source+" "+f.Relation+" "+f.Target)
		}
		if strings.Join(got, "; ") != want {
			t.Errorf("%q: facts %v, want %s", text, got, want)
		}
	}
}

// TestHeuristic_Correction: "X, not Y", "X instead of Y", "X rather than Y" and "not Y
// but X" state X and end the same fact about Y as of the episode, so resolution ends a
// stored one; a denial with nothing named in its place ends nothing.
func TestHeuristic_Correction(t *testing.T) {
	at := time.Date(2025, 3, 1, 10, 5, 0, 0, time.UTC)
	x, err := extract.Heuristic{}.Extract(context.Background(), &graph.Episode{ValidAt: at,
		Content: "Lena (user): sorry, correction: Jonas lives in Bremen, not Hamburg. I work at Globex, not Initech. " +
			"Mia lives not in Kiel but in Lübeck. Tom moved to Essen instead of Bonn. Ada works at Initrode rather than Hooli. " +
			"Rolf is not working at Vandelay."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range x.Facts {
		s := f.Source + " " + f.Relation + " " + f.Target
		if f.InvalidAt != nil {
			s += " until " + f.InvalidAt.Format(time.RFC3339)
		}
		got = append(got, s)
	}
	until := " until 2025-03-01T10:05:00Z"
	want := "Jonas LIVES_IN Bremen; Jonas LIVES_IN Hamburg" + until + "; Lena WORKS_AT Globex; Lena WORKS_AT Initech" + until +
		"; Mia LIVES_IN Kiel" + until + "; Mia LIVES_IN Lübeck; Tom LIVES_IN Essen; Tom LIVES_IN Bonn" + until +
		"; Ada WORKS_AT Initrode; Ada WORKS_AT Hooli" + until // a denial with nothing in its place ends nothing
	if strings.Join(got, "; ") != want {
		t.Errorf("facts:\n got %s\nwant %s", strings.Join(got, "; "), want)
	}
}

// TestHeuristic_Endings: a departure said without a year ends the fact at the month's
// occurrence nearest the reference time ("the end of April" said in April, "January"
// said in November is the next one), a pronoun's clause belongs to the sentence's first
// name (not to the company named just before it),
// and "I left Acme" with no date at all ends it as of the episode.
func TestHeuristic_Endings(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		text     string
		ref      time.Time
		src, tgt string
		ended    time.Time
	}{
		{"Priya (user): Erik told the team today that he is leaving Halvorsen Logistics at the end of April.",
			day(2025, 4, 22), "Erik", "Halvorsen Logistics", day(2025, 4, 30)},
		{"Priya (user): I left Halvorsen Logistics at the end of May.", day(2025, 6, 16), "Priya", "Halvorsen Logistics", day(2025, 5, 31)},
		{"Kwame (user): Ines said she is leaving Lumenfield in January.", day(2024, 11, 12), "Ines", "Lumenfield", day(2025, 1, 1)},
		{"Dana (user): I quit Initech.", day(2025, 3, 9), "Dana", "Initech", day(2025, 3, 9)},
		{"Lin (user): Arjun starts at Tessaract Labs in January, he's leaving Vantage Softworks after 6 years.",
			day(2024, 12, 2), "Arjun", "Vantage Softworks", day(2025, 1, 1)},
		// Relative times, resolved against the episode's reference time, across a
		// month's and a year's end.
		{"Dana (user): I left Initech yesterday.", day(2025, 3, 1), "Dana", "Initech", day(2025, 2, 28)},
		{"Dana (user): I quit Initech two weeks ago.", day(2025, 1, 6), "Dana", "Initech", day(2024, 12, 23)},
		{"Dana (user): I left Initech last month.", day(2025, 1, 10), "Dana", "Initech", day(2024, 12, 1)},
	} {
		x, err := extract.Heuristic{}.Extract(context.Background(), &graph.Episode{Content: c.text, ValidAt: c.ref}, nil)
		if err != nil {
			t.Fatal(err)
		}
		x, _ = extract.Clean(x, extract.DefaultEntityTypes)
		if len(x.Facts) != 1 {
			t.Errorf("%q: facts %+v, want one", c.text, x.Facts)
			continue
		}
		f := x.Facts[0]
		if f.Source != c.src || f.Relation != "WORKS_AT" || f.Target != c.tgt || f.InvalidAt == nil || !f.InvalidAt.Equal(c.ended) {
			t.Errorf("%q: %s %s %s ended %v, want %s WORKS_AT %s ended %s", c.text, f.Source, f.Relation, f.Target, f.InvalidAt,
				c.src, c.tgt, c.ended.Format(time.DateOnly))
		}
	}
}

// TestHeuristic_Retraction: what the speaker took back within the memory is not
// extracted; what follows the retraction is.
func TestHeuristic_Retraction(t *testing.T) {
	x, err := extract.Heuristic{}.Extract(context.Background(), &graph.Episode{ValidAt: time.Now(),
		Content: "Lena (user): I work at Globex.\nassistant: Noted.\nLena (user): scratch that. I work at Initech. I live in Porto, strike that, I live in Braga."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range x.Facts {
		got = append(got, f.Source+" "+f.Relation+" "+f.Target)
	}
	if want := "Lena WORKS_AT Initech; Lena LIVES_IN Braga"; strings.Join(got, "; ") != want {
		t.Errorf("facts %q, want %q", got, want)
	}
}

// TestHeuristic_We: the speaker's "we" states what holds of the speaker, as "I" does.
func TestHeuristic_We(t *testing.T) {
	x, err := extract.Heuristic{}.Extract(context.Background(), &graph.Episode{ValidAt: time.Now(),
		Content: "Priya (user): we're moving to Denver in August. We live in Tucson now, and we met Arjun there.\nassistant: we are glad to help in Boston."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range x.Facts {
		got = append(got, f.Source+" "+f.Relation+" "+f.Target)
	}
	if want := "Priya LIVES_IN Denver; Priya LIVES_IN Tucson; Priya KNOWS Arjun"; strings.Join(got, "; ") != want {
		t.Errorf("facts %q, want %q", got, want)
	}
}
