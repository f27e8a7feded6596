// Package extract is the ingestion pipeline: it claims queued episodes, reads entities
// and facts out of each with an Extractor (an OpenAI-compatible LLM, or the offline
// heuristic one), embeds them, resolves them against the episode's own space only, and
// saves the result in one transaction. It imports graph only.
package extract

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/memgate/memgate/graph"
)

// Extractor reads the entities and facts of one episode. previous are the latest
// processed episodes of the same space, newest first, for context.
type Extractor interface {
	Extract(ctx context.Context, ep *graph.Episode, previous []*graph.Episode) (*graph.Extracted, error)
}

// Embedder turns texts into vectors of a fixed dimension, in one call.
type Embedder interface {
	// Embed embeds what is stored and compared: memories, names, facts.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery embeds a search query.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// EntityType is a kind of entity the extractor may assign; it becomes a node label,
// and its attributes node properties.
type EntityType = graph.EntityType

// EdgeType is a kind of relation between entities of given types, with attributes.
type EdgeType = graph.EdgeType

// DefaultEntityTypes are used when the configuration names none.
var DefaultEntityTypes = []EntityType{
	{Name: "Person", Description: "a human being, named"},
	{Name: "Organization", Description: "a company, institution, team or other group"},
	{Name: "Location", Description: "a place: city, country, address, building"},
	{Name: "Event", Description: "something that happens at a time: a meeting, a trip, a release"},
	{Name: "Product", Description: "a product, tool, service or piece of software"},
	{Name: "Concept", Description: "an idea, topic, skill or field"},
}

// Limits on what one episode may add; output beyond them is dropped, never stored. An
// entity's summary is within graph.MaxSummaryRunes.
const (
	maxEntities  = 50
	maxFacts     = 100
	maxNameRunes = graph.MaxEntityNameRunes
	maxFactRunes = 500
	maxRelation  = 60
)

var relationPattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// Clean validates and normalises extractor output, whoever produced it: names and
// text lose control characters and are cut to size, types outside types are dropped,
// relations become SCREAMING_SNAKE_CASE, dates outside years 1000-2999 are dropped,
// dates in summaries and fact texts are said in words (graph.SpokenDates).
// A fact's ends are matched to the listed entities by normalised name, then, for an
// end with markup or a role around the name ("Dana Reyes (user)", "<b>Acme</b>"),
// by the name inside, then by the one entity whose name has all its words or all of
// whose words it has ("Dana" for Dana Reyes); a fact still naming no listed entity
// is dropped. What is dropped is returned by reason. Nothing raw reaches the graph.
func Clean(x *graph.Extracted, types []EntityType) (*graph.Extracted, []Drop) {
	return CleanTyped(x, graph.Ontology{EntityTypes: types})
}

// CleanTyped is Clean with an ontology's edge types and attributes too: an entity's
// or a fact's attribute its type does not declare, or of the wrong type, is dropped
// (what "attribute", reason unknown_attribute or wrong_type); a fact of an edge type
// whose ends are of types it does not join (either way round) keeps the generic
// relation (graph.GenericRelation) with a note, its attributes dropped (what
// "edge_type", reason wrong_types, and each attribute's); never another type.
func CleanTyped(x *graph.Extracted, ont graph.Ontology) (*graph.Extracted, []Drop) {
	types := ont.EntityTypes
	out := &graph.Extracted{}
	var drops []Drop
	if x == nil {
		return out, nil
	}
	known := map[string]string{} // normalized name -> name as kept
	for _, e := range x.Entities {
		name := graph.CleanText(e.Name, maxNameRunes)
		key := Normalize(name)
		switch {
		case key == "":
			drops = append(drops, Drop{"entity", "empty_name", e.Name})
			continue
		case known[key] != "":
			continue // the same entity listed twice: one is kept
		case len(out.Entities) == maxEntities:
			drops = append(drops, Drop{"entity", "over_limit", name})
			continue
		}
		known[key] = name
		typ := typeName(e.Type, types)
		var declared []graph.Attribute
		if t := ont.EntityType(typ); t != nil && typ != "" {
			declared = t.Attributes
		}
		attrs, dropped := cleanAttributes(e.Attributes, declared, name)
		drops = append(drops, dropped...)
		out.Entities = append(out.Entities, graph.ExtractedEntity{
			Name: name, Type: typ, Summary: graph.CleanText(graph.SpokenDates(e.Summary), graph.MaxSummaryRunes),
			Attributes: attrs,
		})
	}
	typeOf := map[string]string{}
	for _, e := range out.Entities {
		typeOf[e.Name] = e.Type
	}
	for _, f := range x.Facts {
		src, tgt := salvage(f.Source, known), salvage(f.Target, known)
		rel := relationName(f.Relation)
		if fits(rel, typeOf[tgt], typeOf[src]) && !fits(rel, typeOf[src], typeOf[tgt]) {
			src, tgt = tgt, src // "Northwind WORKS_AT Tomás": the ends the wrong way round
		}
		var declared []graph.Attribute
		note := ""
		if et := ont.EdgeType(rel); et != nil && src != "" && tgt != "" {
			switch {
			case et.Allows(typeOf[src], typeOf[tgt]):
				declared = et.Attributes
			case et.Allows(typeOf[tgt], typeOf[src]):
				src, tgt, declared = tgt, src, et.Attributes // the ends the wrong way round
			default:
				note = genericNote(et, typeOf[src], typeOf[tgt])
				drops = append(drops, Drop{"edge_type", "wrong_types", graph.CleanText(src+" "+rel+" "+tgt, maxFactRunes)})
				rel = graph.GenericRelation
			}
		}
		if to := retypes[rel][typeOf[tgt]]; to != "" && src != "" && tgt != "" && fits(rel, typeOf[src], to) && !typeNeeded(out.Facts, tgt) {
			typeOf[tgt] = to // "Marcus WORKS_AT Ridgeview High School", the school guessed a Location
			for i := range out.Entities {
				if out.Entities[i].Name == tgt {
					out.Entities[i].Type = to
				}
			}
		}
		reason := ""
		switch {
		case src == "" || tgt == "":
			reason = "unknown_entity"
		case src == tgt:
			reason = "same_entity"
		case rel == "":
			reason = "bad_relation"
		case !fits(rel, typeOf[src], typeOf[tgt]):
			reason = "wrong_types"
		case len(out.Facts) == maxFacts:
			reason = "over_limit"
		}
		if reason != "" {
			drops = append(drops, Drop{"fact", reason, graph.CleanText(f.Source+" "+f.Relation+" "+f.Target, maxFactRunes)})
			continue
		}
		text := graph.CleanText(graph.SpokenDates(f.Fact), maxFactRunes)
		if text == "" {
			text = src + " " + strings.ToLower(strings.ReplaceAll(rel, "_", " ")) + " " + tgt
		}
		valid, invalid := saneTime(f.ValidAt), saneTime(f.InvalidAt)
		if valid != nil && invalid != nil && invalid.Before(*valid) {
			invalid = nil
		}
		attrs, dropped := cleanAttributes(f.Attributes, declared, src+" "+rel+" "+tgt)
		drops = append(drops, dropped...)
		out.Facts = append(out.Facts, graph.ExtractedFact{Source: src, Target: tgt, Relation: rel, Fact: text,
			ValidAt: valid, InvalidAt: invalid, Attributes: attrs, Note: note})
	}
	return out, drops
}

// cleanAttributes are the values of given that declared declares, each as its
// attribute types it (graph.Attribute.Value); the others are dropped. A null is no
// value (a strict schema makes the model give every attribute), not a drop.
func cleanAttributes(given map[string]any, declared []graph.Attribute, of string) (map[string]any, []Drop) {
	var out map[string]any
	var drops []Drop
	for _, name := range slices.Sorted(maps.Keys(given)) {
		v := given[name]
		if v == nil {
			continue
		}
		i := slices.IndexFunc(declared, func(a graph.Attribute) bool { return a.Name == name })
		if i < 0 {
			drops = append(drops, Drop{"attribute", "unknown_attribute", graph.CleanText(of+" "+name, maxFactRunes)})
			continue
		}
		value, ok := declared[i].Value(v)
		if !ok {
			drops = append(drops, Drop{"attribute", "wrong_type", graph.CleanText(fmt.Sprintf("%s %s=%v", of, name, v), maxFactRunes)})
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[name] = value
	}
	return out, drops
}

// genericNote says why a fact of et between entities of types src and tgt has the
// generic relation.
func genericNote(et *graph.EdgeType, src, tgt string) string {
	orAny := func(types []string) string {
		if len(types) == 0 {
			return "any type"
		}
		return strings.Join(types, " or ")
	}
	orNone := func(t string) string {
		if t == "" {
			return "no type"
		}
		return t
	}
	return fmt.Sprintf("stated as %s, which joins %s to %s; here %s to %s", et.Name, orAny(et.SourceTypes),
		orAny(et.TargetTypes), orNone(src), orNone(tgt))
}

// AsSpeaker gives the episode's one named user speaker ("Bruno Ferreira (user): ...")
// the entities and fact ends a model named after the role instead ("User", "the
// user"): they are that person. An episode with no named user speaker, or several,
// is left as it is.
func AsSpeaker(x *graph.Extracted, content string) {
	speaker := ""
	for _, line := range strings.Split(content, "\n") {
		name, role := lineRole(line)
		switch {
		case role != "user" || name == "":
		case speaker == "":
			speaker = name
		case speaker != name:
			return
		}
	}
	if x == nil || speaker == "" {
		return
	}
	role := func(name string) bool {
		n := Normalize(name)
		return n == "user" || n == "the user"
	}
	for i := range x.Entities {
		if role(x.Entities[i].Name) {
			x.Entities[i].Name = speaker
		}
	}
	for i := range x.Facts {
		if role(x.Facts[i].Source) {
			x.Facts[i].Source = speaker
		}
		if role(x.Facts[i].Target) {
			x.Facts[i].Target = speaker
		}
	}
}

// relationEnds are the types of the ends of the built-in relations whose ends have one
// type: a fact of one of them is turned round when its ends are the other way round,
// its target retyped where the relation corrects a guess (retypes), and dropped
// (wrong_types) when its ends are of other types ("Priya LIVES_IN Contoso", an
// organization). An end of no known type fits anything.
var relationEnds = map[string][2]string{
	"WORKS_AT": {"Person", "Organization"}, "LIVES_IN": {"Person", "Location"}, "REPORTS_TO": {"Person", "Person"},
	"MARRIED_TO": {"Person", "Person"}, "SIBLING_OF": {"Person", "Person"}, "PARTNER_OF": {"Person", "Person"},
}

// retypes are the guessed types of a fact's target that the fact's relation corrects,
// the relation being the stronger evidence: where someone works is an organization,
// even one that is also a place (a school, a clinic, a shop).
var retypes = map[string]map[string]string{"WORKS_AT": {"Location": "Organization"}}

// typeNeeded reports whether a fact kept so far needs name's type as it is (an end of
// a relation of typed ends).
func typeNeeded(facts []graph.ExtractedFact, name string) bool {
	return slices.ContainsFunc(facts, func(f graph.ExtractedFact) bool {
		_, typed := relationEnds[f.Relation]
		return typed && (f.Source == name || f.Target == name)
	})
}

// fits reports whether a fact of rel may join an end of type src to one of type tgt.
// Only the default types are judged: a deployment's own types (ingest.entity_types)
// may name the same things otherwise.
func fits(rel, src, tgt string) bool {
	want, ok := relationEnds[rel]
	judged := func(typ, wanted string) bool {
		return typ == wanted || !slices.ContainsFunc(DefaultEntityTypes, func(t EntityType) bool { return t.Name == typ })
	}
	return !ok || (judged(src, want[0]) && judged(tgt, want[1]))
}

// Drop is one entity or fact Clean dropped, and why: empty_name, over_limit,
// unknown_entity, same_entity, bad_relation, wrong_types.
type Drop struct {
	What, Reason, Text string
}

var markup = regexp.MustCompile(`<[^>]*>|\([^)]*\)|\[[^\]]*\]`)

// salvage is the listed entity a fact's end names (see Clean), or "".
func salvage(end string, known map[string]string) string {
	key := Normalize(graph.CleanText(end, maxNameRunes))
	if name := known[key]; name != "" || key == "" {
		return name
	}
	if inner := Normalize(markup.ReplaceAllString(end, " ")); inner != "" && known[inner] != "" {
		return known[inner]
	}
	words := strings.Fields(Normalize(markup.ReplaceAllString(end, " ")))
	found := ""
	for k, name := range known {
		kw := strings.Fields(k)
		if len(words) > 0 && (subsetOf(words, kw) || subsetOf(kw, words)) {
			if found != "" {
				return "" // more than one: not sure which
			}
			found = name
		}
	}
	return found
}

// subsetOf reports whether every word of a is in b.
func subsetOf(a, b []string) bool {
	for _, w := range a {
		if !slices.Contains(b, w) {
			return false
		}
	}
	return true
}

// Normalize is the form names are compared in: lower case, single spaces, no
// surrounding punctuation, no accents (Tomás and Tomas are one name: a small model
// writes either).
func Normalize(name string) string {
	if folded, _, err := transform.String(unaccent(), name); err == nil {
		name = folded
	}
	name = strings.ToLower(strings.Join(strings.Fields(name), " "))
	return strings.TrimFunc(name, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// unaccent takes the accents off letters: decomposed, without the combining marks. A
// chain keeps state, so each use makes its own.
func unaccent() transform.Transformer {
	return transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
}

func typeName(t string, types []EntityType) string {
	for _, et := range types {
		if strings.EqualFold(strings.TrimSpace(t), et.Name) {
			return et.Name
		}
	}
	return ""
}

// relationName turns "works at" or "works-at" into WORKS_AT; a relation with any
// other character than letters, digits, spaces, hyphens and underscores is refused.
func relationName(r string) string {
	for _, c := range r {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '-' || c == '_') {
			return ""
		}
	}
	var b strings.Builder
	underscore := false
	for _, c := range strings.ToUpper(strings.TrimSpace(r)) {
		switch {
		case c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			b.WriteRune(c)
			underscore = false
		case !underscore && b.Len() > 0: // space, hyphen, underscore
			b.WriteByte('_')
			underscore = true
		}
	}
	rel := strings.TrimRight(b.String(), "_")
	if len(rel) > maxRelation || !relationPattern.MatchString(rel) {
		return ""
	}
	return rel
}

func saneTime(t *time.Time) *time.Time {
	if t == nil || t.Year() < 1000 || t.Year() > 2999 {
		return nil
	}
	u := t.UTC()
	return &u
}

// Ground keeps of x what its texts say: texts[0] is the memory, the others the
// context it was shown. An entity none of whose words (accents and case aside) any of
// them holds, other than the unnamed speaker (speakerRoles), is dropped, and with it
// every fact that has it as an end (reason ungrounded), so a model cannot add to the
// graph a name the conversation never said. A fact is dropped too unless the memory
// itself names one of its ends and names the other or refers to it by a pronoun
// (thirdPerson; selfWords for a person, its speaker), and states its text
// (statedFact); and so is a sentence of an
// entity's summary the memory does not state (stated; the words of the names and of
// the relations of the entity's kept facts aside): reason unstated. The context
// resolves names; it is never the source of a fact. x is Clean's output: each fact's
// ends are its entities' names.
func Ground(x *graph.Extracted, texts ...string) (*graph.Extracted, []Drop) {
	said := map[string]bool{}
	for _, t := range texts {
		for _, w := range nameWords(t) {
			said[w] = true
		}
	}
	named := func(name string) bool {
		return speakerRoles[Normalize(name)] ||
			slices.ContainsFunc(nameWords(name), func(w string) bool { return said[w] })
	}
	memory := stems(firstOr(texts))
	out := &graph.Extracted{}
	var drops []Drop
	kept := map[string]bool{}
	var names []string
	for _, e := range x.Entities {
		if !named(e.Name) {
			drops = append(drops, Drop{"entity", "ungrounded", e.Name})
			continue
		}
		kept[e.Name] = true
		names = append(names, e.Name, e.Type)
	}
	// An end the memory does not name it may refer to by a pronoun: "he" or "there"
	// to anything, "I" or "my" to its speaker, a person.
	said3rd, said1st := false, false
	for _, w := range nameWords(firstOr(texts)) {
		said3rd, said1st = said3rd || thirdPerson[w], said1st || selfWords[w]
	}
	typeOf := map[string]string{}
	for _, e := range x.Entities {
		typeOf[e.Name] = e.Type
	}
	present := func(name string) bool { return said3rd || said1st && typeOf[name] == "Person" }
	relations := map[string][]string{} // entity -> the relations of its kept facts
	for _, f := range x.Facts {
		name := graph.CleanText(f.Source+" "+f.Relation+" "+f.Target, maxFactRunes)
		src, tgt := namedIn(f.Source, memory), namedIn(f.Target, memory)
		switch {
		case !kept[f.Source] || !kept[f.Target]:
			drops = append(drops, Drop{"fact", "ungrounded", name})
		case !(src || tgt) || !(src || present(f.Source)) || !(tgt || present(f.Target)) || !statedFact(f, memory):
			drops = append(drops, Drop{"fact", "unstated", name + ": " + f.Fact})
		default:
			out.Facts = append(out.Facts, f)
			relations[f.Source] = append(relations[f.Source], f.Relation)
			relations[f.Target] = append(relations[f.Target], f.Relation)
		}
	}
	for _, e := range x.Entities {
		if !kept[e.Name] {
			continue
		}
		skip := stems(append(names, relations[e.Name]...)...)
		var summary []string
		for _, sentence := range sentences(e.Summary) {
			if stated(sentence, skip, memory) {
				summary = append(summary, sentence)
			} else {
				drops = append(drops, Drop{"summary", "unstated", e.Name + ": " + sentence})
			}
		}
		e.Summary = strings.Join(summary, " ")
		out.Entities = append(out.Entities, e)
	}
	return out, drops
}

// summaryEnd is where a sentence of a summary ends.
var summaryEnd = regexp.MustCompile(`[.;!?]+(?:\s+|$)`)

// sentences splits text into its sentences, each with the mark that ends it.
func sentences(text string) []string {
	var out []string
	from := 0
	for _, end := range append(summaryEnd.FindAllStringIndex(text, -1), []int{len(text), len(text)}) {
		if s := strings.TrimSpace(text[from:end[1]]); s != "" {
			out = append(out, s)
		}
		from = end[1]
	}
	return out
}

// namedIn reports whether the memory (the stems of its words) names name: a word of
// it, or the unnamed speaker.
func namedIn(name string, memory map[string]bool) bool {
	return speakerRoles[Normalize(name)] || slices.ContainsFunc(nameWords(name), func(w string) bool { return memory[stem(w)] })
}

// statedFact reports whether the memory states fact f's text: the text names one of
// its ends (a word of its name, or the unnamed speaker as either end), and the memory
// states the rest (stated), its ends' names and its relation's words aside (a model
// writes "lives in" for "moved to"). "Helen has a pet named Marcus" (HAS_PET), from
// "My wife Helen is a veterinarian", is not stated; "Bob lives in Paris" (LIVES_IN),
// from "Bob has a flat in Paris", is.
func statedFact(f graph.ExtractedFact, memory map[string]bool) bool {
	ends := nameWords(f.Source + " " + f.Target)
	named := speakerRoles[Normalize(f.Source)] || speakerRoles[Normalize(f.Target)] ||
		slices.ContainsFunc(nameWords(f.Fact), func(w string) bool { return slices.Contains(ends, w) })
	return named && stated(f.Fact, stems(f.Source, f.Target, f.Relation), memory)
}

// stated reports whether the memory (the stems of its words) states text: at least
// half of its words are the memory's, compared by stem, leaving out skip's (stems),
// stop words, numbers and words of time (timeWords: a model writes "since March 2024"
// for "last month").
func stated(text string, skip, memory map[string]bool) bool {
	words, found := 0, 0
	for _, w := range nameWords(text) {
		if skip[stem(w)] || graph.StopWord(w) || timeWords[w] || strings.Trim(w, "0123456789") == "" {
			continue
		}
		words++
		if memory[stem(w)] {
			found++
		}
	}
	return 2*found >= words
}

// stems are the stems of the words of texts.
func stems(texts ...string) map[string]bool {
	out := map[string]bool{}
	for _, t := range texts {
		for _, w := range nameWords(t) {
			out[stem(w)] = true
		}
	}
	return out
}

// thirdPerson are the pronouns by which a memory refers to what an earlier one named.
var thirdPerson = map[string]bool{"he": true, "him": true, "his": true, "she": true, "her": true, "hers": true, "they": true,
	"them": true, "their": true, "it": true, "its": true, "there": true}

// selfWords are the pronouns by which a memory's speaker refers to themselves.
var selfWords = map[string]bool{"i": true, "me": true, "my": true, "mine": true, "myself": true, "we": true, "us": true,
	"our": true, "ours": true}

// firstOr is the first of texts, or "".
func firstOr(texts []string) string {
	if len(texts) == 0 {
		return ""
	}
	return texts[0]
}

// timeWords are the words a text says when with: stated leaves them out.
var timeWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`since until till now currently still anymore longer ago recently formerly previously
		former later earlier today yesterday tomorrow year years month months week weeks day days
		january february march april may june july august september october november december
		monday tuesday wednesday thursday friday saturday sunday`) {
		timeWords[w] = true
	}
}

// stem is the part of a normalised word that its forms share, as far as stated
// compares them: without a plural or tense ending, at most five letters.
func stem(w string) string {
	for _, end := range []string{"ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, end) && len(w)-len(end) >= 3 {
			w = strings.TrimSuffix(w, end)
			break
		}
	}
	if r := []rune(w); len(r) > 5 {
		return string(r[:5])
	}
	return w
}

// speakerRoles are the names of a memory's unnamed speaker (the heuristic's, and a
// model's that AsSpeaker found no name for): said by whoever wrote it, named or not.
var speakerRoles = map[string]bool{"user": true, "the user": true, "speaker": true}

// nameWords are the words names are compared by: text normalised (Normalize), split
// at nameBreak.
func nameWords(text string) []string { return strings.FieldsFunc(Normalize(text), nameBreak) }

// nameBreak splits a normalised text into the words names are compared by.
func nameBreak(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
