package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/terms"
)

// ContextQuery asks for the memory that bears on an agent's next turn: the recent
// conversation (Messages, oldest first) or a Query.
type ContextQuery struct {
	AgentID   string
	Messages  []graph.Message
	Query     string
	MaxTokens int // 0: DefaultContextTokens
	AsOf      *time.Time
	Scopes    []string
	Types     graph.TypeQuery // as search's: the facts and entities drawn on are of these types
}

// TurnContext is a block of plain text for an agent's prompt, its size in tokens of
// the Tokenizer, and the ids of what it was drawn from.
type TurnContext struct {
	Text      string
	Tokens    int
	Tokenizer string
	Facts     []string
	Entities  []string
	Episodes  []string
}

const (
	DefaultContextTokens = 1000
	MaxContextTokens     = 32000
	maxContextMessages   = 100
	minCandidates        = 10 // of each kind, from search; one per tokensPerCandidate of budget above that
	maxCandidates        = 100
	tokensPerCandidate   = 30   // a short memory's line
	contextQueryBytes    = 1024 // of the conversation, newest first, to search by
	longJSONBytes        = 200  // JSON at least this long is left out of the query and stubbed in memories
	jsonWindow           = 8 << 10
	entityLineRunes      = 240
	memoryLineRunes      = 480
	minLineTokens        = 8  // about the shortest line a block holds
	minValueTokens       = 16 // a line's value per token counts it at least this long
)

// messageRoles are the roles a message of a conversation may have (OpenAI's and
// AutoGen's); tool output is what tool and function messages hold.
var messageRoles = []string{"system", "developer", "user", "assistant", "tool", "function"}

func toolOutput(role string) bool { return role == "tool" || role == "function" }

// Context builds the block of memory for an agent's next turn: the facts that bear on
// it (current ones, or those that held at AsOf) with their time in words, short
// summaries of the entities they name, and the most relevant memories, with tool
// output pruned to a marked stub (the stored memories are unchanged). It is drawn
// from what Search finds, so from the same spaces (VisibleForAgent) with the same
// ranking, and its text is never more than MaxTokens tokens.
func (s *Service) Context(ctx context.Context, c Call, q ContextQuery) (_ *TurnContext, err error) {
	ctx, end := s.span(ctx, "Context", c)
	defer func() { end(err) }()
	if q.MaxTokens == 0 {
		q.MaxTokens = DefaultContextTokens
	}
	if q.MaxTokens < 1 || q.MaxTokens > MaxContextTokens {
		return nil, graph.Errorf(graph.EINVALID, "max_tokens must be between 1 and %d", MaxContextTokens)
	}
	if _, err := s.Ontology.Filter(q.Types); err != nil {
		return nil, err
	}
	query, err := s.contextQuery(q)
	if err != nil {
		return nil, err
	}
	if query == "" { // a turn of tool output only: nothing to search by, an empty block
		if err := graph.CheckID("agent_id", q.AgentID); err != nil {
			return nil, err
		}
		if _, err := s.Dir.GetAgent(ctx, c.P.Org, q.AgentID); err != nil {
			return nil, err
		}
		return buildContext(&SearchResult{}, "", s.tokenizer(), q.MaxTokens, q.AsOf), nil
	}
	res, err := s.Search(ctx, c, SearchQuery{Query: query, AgentID: q.AgentID, Scopes: q.Scopes,
		Limit: min(max(minCandidates, q.MaxTokens/tokensPerCandidate), maxCandidates), Filter: graph.SearchFilter{AsOf: q.AsOf}, Types: q.Types})
	if err != nil {
		return nil, err
	}
	return buildContext(res, query, s.tokenizer(), q.MaxTokens, q.AsOf), nil
}

// contextQuery is the text to search by: the query, or the conversation's messages
// newest first without tool output and long JSON, cut to contextQueryBytes ("" when
// nothing is left).
func (s *Service) contextQuery(q ContextQuery) (string, error) {
	switch {
	case q.Messages != nil && q.Query != "":
		return "", graph.Errorf(graph.EINVALID, "give messages or query, not both")
	case q.Messages == nil:
		if strings.TrimSpace(q.Query) == "" {
			return "", graph.Errorf(graph.EINVALID, "give messages (the recent conversation) or a query")
		}
		return q.Query, nil
	case len(q.Messages) == 0 || len(q.Messages) > maxContextMessages:
		return "", graph.Errorf(graph.EINVALID, "messages must hold 1 to %d messages", maxContextMessages)
	}
	for i, m := range q.Messages {
		switch {
		case !slices.Contains(messageRoles, m.Role):
			return "", graph.Errorf(graph.EINVALID, "messages[%d].role must be one of %v", i, messageRoles)
		case s.Limits.MaxContentBytes > 0 && len(m.Content) > s.Limits.MaxContentBytes:
			return "", graph.Errorf(graph.EINVALID, "messages[%d].content is longer than %d bytes", i, s.Limits.MaxContentBytes)
		}
	}
	var parts []string
	size := 0
	for i := len(q.Messages) - 1; i >= 0 && size < contextQueryBytes; i-- {
		m := q.Messages[i]
		if toolOutput(m.Role) {
			continue
		}
		text := graph.CleanText(withoutLongJSON(m.Content, false), contextQueryBytes)
		if text != "" {
			parts = append(parts, text)
			size += len(text) + 1
		}
	}
	query := strings.Join(parts, "\n")
	if len(query) > contextQueryBytes {
		query = strings.ToValidUTF8(query[:contextQueryBytes], "")
	}
	return strings.TrimSpace(query), nil
}

// withoutLongJSON is text without each JSON object or array of at least longJSONBytes,
// with a marked stub in its place when stub is set. Only the first jsonWindow bytes
// are read (a context line or a query holds far less): JSON still open at the end of
// them counts as long JSON to its end.
func withoutLongJSON(text string, stub bool) string {
	text = text[:min(len(text), jsonWindow)]
	var b strings.Builder
	tries := 0 // a text of many unclosed brackets is not parsed from each of them
	for i := 0; i < len(text); {
		if (text[i] == '{' || text[i] == '[') && tries < 32 {
			tries++
			d := json.NewDecoder(strings.NewReader(text[i:]))
			var v json.RawMessage
			err := d.Decode(&v)
			open := errors.Is(err, io.ErrUnexpectedEOF) && len(text)-i >= longJSONBytes && len(text) == jsonWindow
			if (err == nil && d.InputOffset() >= longJSONBytes) || open {
				n := int(d.InputOffset())
				if open {
					n = len(text) - i
				}
				if stub {
					fmt.Fprintf(&b, "[JSON, %d bytes, left out]", n)
				}
				i += n
				continue
			}
		}
		b.WriteByte(text[i])
		i++
	}
	return b.String()
}

// The sections of a context block, in the order they appear.
const (
	sectionFacts = iota
	sectionEntities
	sectionMemories
)

// sectionHeaders are the headers of a block's sections; the facts' says the time they
// held at when it is not now.
func sectionHeaders(asOf *time.Time) [3]string {
	facts := "Facts:"
	if asOf != nil {
		facts = "Facts as of " + asOf.UTC().Format("2 January 2006") + ":"
	}
	return [...]string{sectionFacts: facts, sectionEntities: "About:", sectionMemories: "Relevant memories:"}
}

// contextLine is one candidate line of a block: its section, the id it draws on, and
// its value (rankValue of what it shows, half of it for a memory's neighbour).
type contextLine struct {
	section int
	id      string
	text    string
	value   float64
	at      time.Time // a memory's reference time, its place in the block
	order   int       // its rank among the candidates of its section
}

// rankValue is what a line found at rank (0: the best) of its kind is worth: about how
// likely it is to be what the query needs, which falls with the rank as
// 1/(rank+1)^1.5 (LoCoMo's questions: the share of their evidence at ranks 1-5, 6-10
// and 11-20 of search, per rank, fell as 0.096, 0.028 and 0.009). The fused scores
// themselves fall far slower (reciprocal rank fusion's 1/(60+rank)).
func rankValue(rank int) float64 { return math.Pow(float64(rank+1), -1.5) }

// buildContext chooses the lines of a block from what search found, best value per
// token first across facts, entities and memories, as many as fit the budget: a
// memory's line shows when it was said, who said it, and its relative times resolved
// ("yesterday (7 May 2023)"); facts and entity summaries are candidates only where
// they bear on the query (a word of it, by stem, in the fact or its ends' names, in the entity's
// name; any when the query has none). The lines are laid out by section: facts and
// entities in rank order, memories in the order they happened. The text's count is taken again at the end, whole, and lines are
// dropped, least valuable first, until it fits: a block is never over budget, whatever
// the tokenizer does at the joins.
func buildContext(res *SearchResult, query string, tok *Tokenizer, budget int, asOf *time.Time) *TurnContext {
	headers := sectionHeaders(asOf)
	asked := terms.Query(query)
	bears := func(texts ...string) bool {
		if len(asked) == 0 {
			return true
		}
		for _, t := range texts {
			for _, w := range terms.Of(t) {
				if slices.Contains(asked, w) {
					return true
				}
			}
		}
		return false
	}
	var lines []contextLine
	add := func(l contextLine) {
		for _, have := range lines {
			if have.section == l.section && have.id == l.id {
				return
			}
		}
		l.order = len(lines)
		lines = append(lines, l)
	}
	entityValue := map[string]float64{}
	var entities []*graph.EntityNode
	for rank, h := range res.Facts {
		if !bears(h.Fact.Fact, h.Source.Name, h.Target.Name) {
			continue
		}
		text := graph.CleanText(h.Fact.Fact, 400)
		if text == "" {
			text = h.Source.Name + " " + h.Fact.Name + " " + h.Target.Name
		}
		add(contextLine{section: sectionFacts, id: h.Fact.UUID, text: "- " + text + " (" + h.Fact.TimeInWords() + ")", value: rankValue(rank)})
		for _, e := range []*graph.EntityNode{h.Source, h.Target} {
			entities = append(entities, e)
			entityValue[e.UUID] = max(entityValue[e.UUID], rankValue(rank))
		}
	}
	for rank, h := range res.Entities {
		entities = append(entities, h.Entity)
		entityValue[h.Entity.UUID] = max(entityValue[h.Entity.UUID], rankValue(rank))
	}
	for _, e := range entities {
		// A summary is written from all that is known now, so it is no line of a block
		// as of an earlier time.
		if asOf != nil || strings.TrimSpace(e.Summary) == "" || !bears(e.Name) {
			continue
		}
		name := e.Name
		if e.Type != "" {
			name += " (" + e.Type + ")"
		}
		add(contextLine{section: sectionEntities, id: e.UUID, value: entityValue[e.UUID],
			text: "- " + name + ": " + shorten(graph.CleanText(e.Summary, 4*entityLineRunes), entityLineRunes)})
	}
	memory := func(e *graph.Episode, value float64) {
		add(contextLine{section: sectionMemories, id: e.UUID, value: value, at: e.ValidAt, text: "- " + e.ValidAt.UTC().Format("2 January 2006") + ": " +
			shorten(graph.CleanText(graph.AnnotateTimes(memoryText(e), e.ValidAt), 4*memoryLineRunes), memoryLineRunes)})
	}
	for rank, h := range res.Episodes {
		memory(h.Episode, rankValue(rank))
	}

	// Best value per token first; the first of equals in rank order.
	cost := make([]int, len(lines))
	for i, l := range lines {
		cost[i] = tok.Count(l.text + "\n")
	}
	byValue := make([]int, len(lines))
	for i := range byValue {
		byValue[i] = i
	}
	density := func(i int) float64 { return lines[i].value / float64(max(cost[i], minValueTokens)) }
	slices.SortStableFunc(byValue, func(a, b int) int { return cmp.Compare(density(b), density(a)) })
	var chosen []int // in the order chosen
	used := 0
	opened := [3]bool{}
	for _, i := range byValue {
		if budget-used < minLineTokens {
			break // full: the rest are not counted
		}
		c := cost[i]
		if !opened[lines[i].section] {
			c += tok.Count(headers[lines[i].section]+"\n") + 1 // and the blank line before it
		}
		if used+c > budget {
			continue
		}
		used += c
		opened[lines[i].section] = true
		chosen = append(chosen, i)
	}
	out := &TurnContext{Tokenizer: tok.Name, Facts: []string{}, Entities: []string{}, Episodes: []string{}}
	for {
		out.Text = layout(headers, lines, chosen)
		out.Tokens = tok.Count(out.Text)
		if out.Tokens <= budget || len(chosen) == 0 {
			break
		}
		chosen = chosen[:len(chosen)-1] // the least valuable
	}
	for _, l := range placed(lines, chosen) {
		ids := [3]*[]string{&out.Facts, &out.Entities, &out.Episodes}[l.section]
		*ids = append(*ids, l.id)
	}
	return out
}

// placed are the chosen lines in the order a block lays them out: by section, facts
// and entities in rank order, memories in the order they happened.
func placed(lines []contextLine, chosen []int) []contextLine {
	out := make([]contextLine, len(chosen))
	for i, c := range chosen {
		out[i] = lines[c]
	}
	slices.SortStableFunc(out, func(a, b contextLine) int {
		if a.section != b.section {
			return cmp.Compare(a.section, b.section)
		}
		if a.section == sectionMemories && !a.at.Equal(b.at) {
			return a.at.Compare(b.at)
		}
		return cmp.Compare(a.order, b.order)
	})
	return out
}

// layout is the text of the chosen lines: each section that has one, under its
// header, its lines placed, sections apart by a blank line.
func layout(headers [3]string, lines []contextLine, chosen []int) string {
	var sections []string
	for sec, header := range headers {
		text := []string{header}
		for _, l := range placed(lines, chosen) {
			if l.section == sec {
				text = append(text, l.text)
			}
		}
		if len(text) > 1 {
			sections = append(sections, strings.Join(text, "\n"))
		}
	}
	return strings.Join(sections, "\n\n")
}

// memoryText is a memory as a context shows it: a conversation's messages one after
// another, tool output replaced by a marked stub, long JSON too (not in a memory that
// is JSON data itself, which is only shortened).
func memoryText(e *graph.Episode) string {
	if e.Messages == nil {
		if e.Source == graph.SourceJSON {
			return e.Content
		}
		return withoutLongJSON(e.Content, true)
	}
	parts := make([]string, len(e.Messages))
	for i, m := range e.Messages {
		who := m.Role
		if m.Name != "" {
			who = m.Name // the speaker, by name
		}
		content := withoutLongJSON(m.Content, true)
		if toolOutput(m.Role) {
			content = fmt.Sprintf("[tool output, %d bytes, left out]", len(m.Content))
		}
		parts[i] = who + ": " + content
	}
	return strings.Join(parts, " / ")
}

// shorten cuts text to at most n runes at a word, marking the cut with "…".
func shorten(text string, n int) string {
	r := []rune(text)
	if len(r) <= n {
		return text
	}
	cut := string(r[:n-1])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

// tokenizer is the Service's Tokenizer, or the default encoding's.
func (s *Service) tokenizer() *Tokenizer {
	if s.Tokens != nil {
		return s.Tokens
	}
	defaultTokenizerOnce.Do(func() {
		t, err := NewTokenizer(DefaultTokenizer)
		if err != nil {
			panic(err) // the table is built in
		}
		defaultTokenizer = t
	})
	return defaultTokenizer
}

var (
	defaultTokenizerOnce sync.Once
	defaultTokenizer     *Tokenizer
)
