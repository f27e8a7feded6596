package service

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
)

// history is a generated search result: facts, entities and memories of many sizes,
// some in other scripts, some conversations with tool output.
func history(seed uint64) *SearchResult {
	r := rand.New(rand.NewPCG(seed, 7))
	words := []string{"Alice", "works", "at", "Globex", "naïve", "東京", "データ", "🙂", "café", "engineer",
		"moved", "to", "Lisbon", "in", "March", "2024", "{\"k\":", "Добрый", "день", "x"}
	text := func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = words[r.IntN(len(words))]
		}
		return strings.Join(out, " ")
	}
	at := time.Date(2020+r.IntN(6), time.Month(1+r.IntN(12)), 1, 0, 0, 0, 0, time.UTC)
	entity := func(i int) *graph.EntityNode {
		return &graph.EntityNode{UUID: fmt.Sprintf("e%d-%d", seed, i), Name: text(1 + r.IntN(3)), Type: "Person",
			Summary: text(r.IntN(120))}
	}
	res := &SearchResult{}
	for i := range r.IntN(25) {
		f := &graph.Fact{UUID: fmt.Sprintf("f%d-%d", seed, i), Name: "WORKS_AT", Fact: text(3 + r.IntN(40)), ValidAt: &at,
			StartAssumed: r.IntN(2) == 0}
		if r.IntN(3) == 0 {
			end := at.AddDate(1, 0, 0)
			f.InvalidAt = &end
		}
		res.Facts = append(res.Facts, graph.FactHit{Fact: f, Source: entity(2 * i), Target: entity(2*i + 1)})
	}
	for i := range r.IntN(10) {
		res.Entities = append(res.Entities, graph.EntityHit{Entity: entity(100 + i)})
	}
	for i := range r.IntN(12) {
		e := &graph.Episode{UUID: fmt.Sprintf("m%d-%d", seed, i), ValidAt: at, Content: text(5 + r.IntN(300))}
		if r.IntN(2) == 0 {
			e.Messages = []graph.Message{{Role: "user", Content: text(20)},
				{Role: "tool", Content: strings.Repeat("{\"row\": 1}", 50)}, {Role: "assistant", Content: text(30)}}
		}
		res.Episodes = append(res.Episodes, graph.ScoredEpisode{Episode: e})
	}
	return res
}

// A context block is never over its budget by the tokenizer that counts it, says how
// many tokens it holds, lists exactly the ids whose lines it holds, and is the same
// block every time for the same findings.
func TestContext_NeverOverBudget(t *testing.T) {
	t.Parallel() // CPU alone (tokenizers under -race): beside the tests that wait on Neo4j
	budgets := []int{64, 100, 180, 256, 500, 1000, 2000, 4000, 8000}
	for _, name := range Tokenizers {
		tok, err := NewTokenizer(name)
		if err != nil {
			t.Fatal(err)
		}
		used := 0
		for seed := range uint64(24) {
			res := history(seed)
			for _, budget := range budgets {
				tc := buildContext(res, "", tok, budget, nil)
				if n := tok.Count(tc.Text); n > budget || n != tc.Tokens {
					t.Fatalf("%s, history %d, budget %d: %d tokens (reported %d)", name, seed, budget, n, tc.Tokens)
				}
				if again := buildContext(res, "", tok, budget, nil); again.Text != tc.Text || !slices.Equal(again.Facts, tc.Facts) {
					t.Fatalf("%s, history %d, budget %d: two blocks for the same findings", name, seed, budget)
				}
				found := findings(res)
				for _, ids := range [][]string{tc.Facts, tc.Entities, tc.Episodes} {
					for _, id := range ids {
						if !found[id] {
							t.Fatalf("id %s is not among the findings", id)
						}
					}
				}
				lines := strings.Count(tc.Text, "\n- ")
				if lines != len(tc.Facts)+len(tc.Entities)+len(tc.Episodes) {
					t.Fatalf("%s, history %d, budget %d: %d lines for %d ids:\n%s", name, seed, budget, lines,
						len(tc.Facts)+len(tc.Entities)+len(tc.Episodes), tc.Text)
				}
				if budget >= 500 && len(res.Facts) > 0 && len(tc.Facts) == 0 {
					t.Fatalf("%s, history %d, budget %d: no fact in the block", name, seed, budget)
				}
				if budget == 8000 {
					used += tc.Tokens
				}
			}
		}
		t.Logf("%s: 24 histories × %d budgets within budget; %d tokens at 8000 in all", name, len(budgets), used)
	}
}

// findings are the ids of what search found.
func findings(res *SearchResult) map[string]bool {
	ids := map[string]bool{}
	for _, h := range res.Facts {
		ids[h.Fact.UUID], ids[h.Source.UUID], ids[h.Target.UUID] = true, true, true
	}
	for _, h := range res.Entities {
		ids[h.Entity.UUID] = true
	}
	for _, h := range res.Episodes {
		ids[h.Episode.UUID] = true
	}
	return ids
}

// The block says each fact's time in words, never an assumed start as a date, and
// shows a conversation's tool output as a marked stub.
func TestContext_Lines(t *testing.T) {
	march := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	may := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	alice := &graph.EntityNode{UUID: "a", Name: "Alice", Type: "Person", Summary: "Alice is an engineer."}
	globex := &graph.EntityNode{UUID: "g", Name: "Globex"}
	res := &SearchResult{
		Facts: []graph.FactHit{
			{Fact: &graph.Fact{UUID: "f1", Fact: "Alice works at Globex.", ValidAt: &march}, Source: alice, Target: globex},
			{Fact: &graph.Fact{UUID: "f2", Fact: "Alice lives in Lisbon.", ValidAt: &march, StartAssumed: true}, Source: alice, Target: globex},
			{Fact: &graph.Fact{UUID: "f3", Fact: "Alice mentors Bob.", ValidAt: &march, InvalidAt: &may}, Source: alice, Target: globex},
			{Fact: &graph.Fact{UUID: "f4", Fact: "Alice chairs the board.", InvalidAt: &may}, Source: alice, Target: globex},
		},
		Episodes: []graph.ScoredEpisode{{Episode: &graph.Episode{UUID: "m1", ValidAt: march.AddDate(0, 0, 19),
			Messages: []graph.Message{{Role: "user", Content: "what is the weather"},
				{Role: "tool", Content: `{"secret_tool_payload": "sunny"}`}, {Role: "assistant", Content: "It is sunny."}}}}},
	}
	tok, _ := NewTokenizer(DefaultTokenizer)
	got := buildContext(res, "", tok, 1000, nil).Text
	for _, want := range []string{
		"- Alice works at Globex. (since March 2024)",
		"- Alice lives in Lisbon. (start unknown)",
		"- Alice mentors Bob. (from March 2024 until May 2025)",
		"- Alice chairs the board. (start unknown, until May 2025)",
		"- Alice (Person): Alice is an engineer.",
		"- 20 March 2024: user: what is the weather / tool: [tool output, 32 bytes, left out] / assistant: It is sunny.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the block lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "secret_tool_payload") {
		t.Errorf("tool output reached the block:\n%s", got)
	}
	if res.Episodes[0].Episode.Messages[1].Content != `{"secret_tool_payload": "sunny"}` {
		t.Error("building the block changed the memory")
	}
}

// The query is the conversation newest first, without tool output and long JSON; a
// request gives messages or a query, never both or neither, with known roles.
func TestContext_Query(t *testing.T) {
	s := &Service{Limits: Limits{MaxContentBytes: 1000}}
	long := `{"items": [` + strings.Repeat(`{"id": 12345, "name": "widget"},`, 10) + `{"id": 0}]}`
	q, err := s.contextQuery(ContextQuery{Messages: []graph.Message{
		{Role: "user", Content: "Where does Alice work?"},
		{Role: "tool", Content: "toolword result rows"},
		{Role: "assistant", Content: "Let me check. " + long + " Done."},
		{Role: "user", Content: "And since when?"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "And since when?\nLet me check. Done.\nWhere does Alice work?"; q != want {
		t.Errorf("query = %q, want %q", q, want)
	}
	if q, err := s.contextQuery(ContextQuery{Messages: []graph.Message{{Role: "tool", Content: "only tool output"}}}); q != "" || err != nil {
		t.Errorf("a turn of tool output only: query %q, %v; want none, no error (an empty block)", q, err)
	}
	for _, c := range []struct {
		q    ContextQuery
		want string
	}{
		{ContextQuery{}, "give messages (the recent conversation) or a query"},
		{ContextQuery{Query: "x", Messages: []graph.Message{{Role: "user", Content: "y"}}}, "give messages or query, not both"},
		{ContextQuery{Messages: []graph.Message{}}, "messages must hold 1 to 100 messages"},
		{ContextQuery{Messages: []graph.Message{{Role: "robot", Content: "y"}}}, "messages[0].role must be one of"},
		{ContextQuery{Messages: []graph.Message{{Role: "user", Content: strings.Repeat("y", 1001)}}}, "messages[0].content is longer than 1000 bytes"},
	} {
		_, err := s.contextQuery(c.q)
		if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(graph.ErrorMessage(err), c.want) {
			t.Errorf("contextQuery(%+v) = %v; want EINVALID %q", c.q, err, c.want)
		}
	}
}

// A memory of many brackets or of JSON longer than the window is read no further than
// the window (what a line or a query holds is far less), and JSON still open there is
// stubbed.
func TestContext_LongJSONWindow(t *testing.T) {
	if got := withoutLongJSON(strings.Repeat("[", 250<<10), true); len(got) > jsonWindow {
		t.Errorf("%d bytes back from a text of brackets", len(got))
	}
	long := "Result: " + `{"rows": [` + strings.Repeat(`{"id": 1, "name": "widget"},`, 2000) + `{"id": 0}]} done`
	if got := withoutLongJSON(long, true); !strings.HasPrefix(got, "Result: [JSON, ") || strings.Contains(got, "widget") {
		t.Errorf("JSON longer than the window: %.80q", got)
	}
}

// A block fills its budget when search found more than it holds (at least 90% of it),
// best value per token first, without going over; shows memories in the order they happened,
// with who said them and their relative times resolved; and leaves out facts and
// entity summaries that do not bear on the query.
func TestContext_FillsItsBudget(t *testing.T) {
	tok, _ := NewTokenizer(DefaultTokenizer)
	day := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	turn := func(i int, text string) *graph.Episode {
		return &graph.Episode{UUID: fmt.Sprintf("m%03d", i), ValidAt: day.AddDate(0, 0, i),
			Messages: []graph.Message{{Role: "user", Name: []string{"Caroline", "Melanie"}[i%2], Content: text}}}
	}
	res := &SearchResult{}
	for i := range 80 {
		res.Episodes = append(res.Episodes, graph.ScoredEpisode{Episode: turn(80-i, fmt.Sprintf(
			"I painted a sunrise at the lake %d times yesterday, and the colours were%s.", i, strings.Repeat(" very", i%7))),
			Score: 1 / float64(61+i)})
	}
	alice := &graph.EntityNode{UUID: "alice", Name: "Alice", Summary: "Alice paints."}
	bob := &graph.EntityNode{UUID: "bob", Name: "Bob", Summary: "Bob sails."}
	res.Facts = []graph.FactHit{
		{Fact: &graph.Fact{UUID: "f-paint", Fact: "Alice paints sunrises."}, Source: alice, Target: bob, Score: 2 / 61.0},
		{Fact: &graph.Fact{UUID: "f-sail", Fact: "Bob sails on weekends."}, Source: bob, Target: bob, Score: 2 / 61.0},
	}
	for _, budget := range []int{300, 1000, 2000} {
		tc := buildContext(res, "When did Alice paint a sunrise?", tok, budget, nil)
		if tc.Tokens > budget || tc.Tokens < budget*9/10 {
			t.Errorf("budget %d: %d tokens, want at least 90%% of it and never more", budget, tc.Tokens)
		}
		if again := buildContext(res, "When did Alice paint a sunrise?", tok, budget, nil); again.Text != tc.Text {
			t.Errorf("budget %d: two blocks for the same findings", budget)
		}
		if !slices.Contains(tc.Facts, "f-paint") || slices.Contains(tc.Facts, "f-sail") || slices.Contains(tc.Entities, "bob") {
			t.Errorf("budget %d: facts %v, entities %v: want the fact about Alice's painting alone, no Bob", budget, tc.Facts, tc.Entities)
		}
		// In the order they happened: the block's dates ascend.
		var last time.Time
		for _, line := range strings.Split(tc.Text, "\n") {
			date, _, ok := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
			at, err := time.Parse("2 January 2006", date)
			if !ok || err != nil {
				continue
			}
			if at.Before(last) {
				t.Errorf("budget %d: memories out of order at %q", budget, line)
			}
			last = at
		}
	}
	tc := buildContext(res, "sunrise", tok, 1000, nil)
	if !strings.Contains(tc.Text, "- 27 July 2023: Caroline: I painted a sunrise at the lake 0 times yesterday (26 July 2023), and") {
		t.Errorf("a memory's line lacks its date, speaker or resolved time:\n%s", tc.Text)
	}
}
