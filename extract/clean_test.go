package extract_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
)

// TestNormalize: names that differ only in case, spacing, surrounding punctuation or
// accents compare equal (issue 31, point 7: a small model wrote Tomás and Tomas); other
// names do not.
func TestNormalize(t *testing.T) {
	for _, same := range [][2]string{{"Tomás Ruiz", "tomas ruiz"}, {"  Zoë  Müller.", "Zoe Muller"}, {"ÅSA", "asa"}, {"Nordvik", "NORDVIK"}} {
		if a, b := extract.Normalize(same[0]), extract.Normalize(same[1]); a != b {
			t.Errorf("%q and %q normalize to %q and %q", same[0], same[1], a, b)
		}
	}
	for _, other := range [][2]string{{"Tomás", "Tomasz"}, {"Ana", "Anna"}} {
		if extract.Normalize(other[0]) == extract.Normalize(other[1]) {
			t.Errorf("%q and %q normalize alike", other[0], other[1])
		}
	}
}

// TestClean_RelationTypes: a built-in relation whose ends come the wrong way round is
// turned round, a workplace guessed a Location becomes the Organization WORKS_AT
// says it is (unless a fact kept before needs it a Location), one whose ends are of
// other default types is dropped (wrong_types), and ends of no type or of a
// deployment's own types pass.
func TestClean_RelationTypes(t *testing.T) {
	types := append(slices.Clone(extract.DefaultEntityTypes), extract.EntityType{Name: "Company", Description: "a firm"})
	x := &graph.Extracted{
		Entities: []graph.ExtractedEntity{{Name: "Tomás Ruiz", Type: "Person"}, {Name: "Northwind", Type: "Organization"},
			{Name: "Priya", Type: "Person"}, {Name: "Contoso", Type: "Organization"}, {Name: "Oslo", Type: "Location"},
			{Name: "Rex"}, {Name: "Fabrikam", Type: "Company"}, {Name: "Marcus", Type: "Person"},
			{Name: "Ridgeview High School", Type: "Location"}, {Name: "Bergen", Type: "Location"}},
		Facts: []graph.ExtractedFact{
			{Source: "Northwind", Relation: "WORKS_AT", Target: "Tomás Ruiz"},
			{Source: "Priya", Relation: "LIVES_IN", Target: "Contoso", Fact: "Priya is allergic to peanuts."},
			{Source: "Priya", Relation: "LIVES_IN", Target: "Oslo"},
			{Source: "Rex", Relation: "LIVES_IN", Target: "Oslo"},
			{Source: "Priya", Relation: "WORKS_AT", Target: "Fabrikam"},
			{Source: "Oslo", Relation: "LIKES", Target: "Priya"},
			{Source: "Marcus", Relation: "WORKS_AT", Target: "Ridgeview High School"},
			{Source: "Marcus", Relation: "LIVES_IN", Target: "Bergen"},
			{Source: "Marcus", Relation: "WORKS_AT", Target: "Bergen"},
		},
	}
	out, drops := extract.Clean(x, types)
	var got []string
	for _, f := range out.Facts {
		got = append(got, f.Source+" "+f.Relation+" "+f.Target)
	}
	want := []string{"Tomás Ruiz WORKS_AT Northwind", "Priya LIVES_IN Oslo", "Rex LIVES_IN Oslo", "Priya WORKS_AT Fabrikam",
		"Oslo LIKES Priya", "Marcus WORKS_AT Ridgeview High School", "Marcus LIVES_IN Bergen"}
	if !slices.Equal(got, want) {
		t.Errorf("facts %q, want %q", got, want)
	}
	if len(drops) != 2 || drops[0].Reason != "wrong_types" || !strings.Contains(drops[0].Text, "Contoso") ||
		drops[1].Reason != "wrong_types" || !strings.Contains(drops[1].Text, "Marcus WORKS_AT Bergen") {
		t.Errorf("drops %+v, want Priya LIVES_IN Contoso and Marcus WORKS_AT Bergen as wrong_types", drops)
	}
	typed := map[string]string{}
	for _, e := range out.Entities {
		typed[e.Name] = e.Type
	}
	if typed["Ridgeview High School"] != "Organization" || typed["Bergen"] != "Location" {
		t.Errorf("the school is a %q, Bergen a %q; want an Organization and a Location", typed["Ridgeview High School"], typed["Bergen"])
	}
}

// TestAsSpeaker: a small model names the speaker after the role ("User"); the
// episode's one named user speaker takes its place, as an entity and as a fact's end,
// and is listed once. With no named speaker, or two, nothing changes.
func TestAsSpeaker(t *testing.T) {
	model := func() *graph.Extracted {
		return &graph.Extracted{
			Entities: []graph.ExtractedEntity{{Name: "User", Type: "Person"}, {Name: "Bruno Ferreira", Type: "Person"},
				{Name: "Padaria Estrela", Type: "Organization"}, {Name: "Rita Sousa", Type: "Person"}},
			Facts: []graph.ExtractedFact{{Source: "User", Relation: "WORKS_AT", Target: "Padaria Estrela"},
				{Source: "Rita Sousa", Relation: "PARTNER_OF", Target: "the user"}},
		}
	}
	facts := func(x *graph.Extracted) string {
		var out []string
		for _, f := range x.Facts {
			out = append(out, f.Source+" "+f.Relation+" "+f.Target)
		}
		return strings.Join(out, "; ")
	}
	one := "Bruno Ferreira (user): I left Padaria Estrela.\nassistant: Sorry to hear.\nBruno Ferreira (user): Rita is happy.\n"
	x := model()
	extract.AsSpeaker(x, one)
	out, _ := extract.Clean(x, extract.DefaultEntityTypes)
	if got, want := facts(out), "Bruno Ferreira WORKS_AT Padaria Estrela; Rita Sousa PARTNER_OF Bruno Ferreira"; got != want {
		t.Errorf("facts %q, want %q", got, want)
	}
	var names []string
	for _, e := range out.Entities {
		names = append(names, e.Name)
	}
	if want := []string{"Bruno Ferreira", "Padaria Estrela", "Rita Sousa"}; !slices.Equal(names, want) {
		t.Errorf("entities %q, want %q", names, want)
	}
	for _, content := range []string{"user: I left Padaria Estrela.\n",
		"Bruno Ferreira (user): I left.\nRita Sousa (user): He did.\n", "I left Padaria Estrela."} {
		x := model()
		extract.AsSpeaker(x, content)
		if got, want := facts(x), facts(model()); got != want {
			t.Errorf("%q: facts %q, want them unchanged", content, got)
		}
	}
}

// TestCleanTyped_EdgeTypes: a fact of an edge type between the types it joins keeps
// it and its attributes; the wrong way round it is turned round; between other types
// it keeps the generic relation with a note and loses its attributes, never another
// type; an entity's attributes are kept as their types say.
func TestCleanTyped_EdgeTypes(t *testing.T) {
	ont := graph.Ontology{
		EntityTypes: []graph.EntityType{{Name: "Customer", Attributes: []graph.Attribute{{Name: "vip", Type: graph.AttrBoolean}}},
			{Name: "Product"}, {Name: "Supplier"}},
		EdgeTypes: []graph.EdgeType{{Name: "PURCHASED", SourceTypes: []string{"Customer"}, TargetTypes: []string{"Product"},
			Attributes: []graph.Attribute{{Name: "quantity", Type: graph.AttrNumber}}}},
	}
	x := &graph.Extracted{
		Entities: []graph.ExtractedEntity{{Name: "Dana", Type: "customer", Attributes: map[string]any{"vip": true, "tier": "gold"}},
			{Name: "X200", Type: "Product"}, {Name: "Northwind", Type: "Supplier"}},
		Facts: []graph.ExtractedFact{
			{Source: "Dana", Target: "X200", Relation: "purchased", Fact: "Dana bought an X200.", Attributes: map[string]any{"quantity": 2.0}},
			{Source: "X200", Target: "Dana", Relation: "PURCHASED", Fact: "X200 bought by Dana.", Attributes: map[string]any{"quantity": "two"}},
			{Source: "Northwind", Target: "X200", Relation: "PURCHASED", Fact: "Northwind bought X200s.", Attributes: map[string]any{"quantity": 9.0}},
		},
	}
	out, drops := extract.CleanTyped(x, ont)
	if e := out.Entities[0]; e.Type != "Customer" || len(e.Attributes) != 1 || e.Attributes["vip"] != true {
		t.Errorf("Dana: %+v", e)
	}
	f := out.Facts
	if len(f) != 3 || f[0].Relation != "PURCHASED" || f[0].Attributes["quantity"] != int64(2) || f[0].Note != "" {
		t.Fatalf("facts %+v", f)
	}
	if f[1].Source != "Dana" || f[1].Target != "X200" || f[1].Relation != "PURCHASED" || f[1].Attributes != nil {
		t.Errorf("the fact the wrong way round: %+v", f[1])
	}
	if f[2].Relation != graph.GenericRelation || f[2].Attributes != nil ||
		f[2].Note != "stated as PURCHASED, which joins Customer to Product; here Supplier to Product" {
		t.Errorf("the fact between types PURCHASED does not join: %+v", f[2])
	}
	got := map[string]int{}
	for _, d := range drops {
		got[d.What+"/"+d.Reason]++
	}
	want := map[string]int{"attribute/unknown_attribute": 2, "attribute/wrong_type": 1, "edge_type/wrong_types": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("drops %v, want %v", got, want)
	}
}

// TestGround: an entity is kept when a word of its name is said in the memory or its
// context (accents and case aside), the unnamed speaker always; any other is dropped
// with the facts it is an end of, each counted as ungrounded.
func TestGround(t *testing.T) {
	x := &graph.Extracted{
		Entities: []graph.ExtractedEntity{{Name: "User"}, {Name: "Speaker"}, {Name: "Porto"}, {Name: "Tomas Ruiz"}, {Name: "Lisbon"}},
		Facts: []graph.ExtractedFact{{Source: "User", Relation: "LIVES_IN", Target: "Porto"},
			{Source: "User", Relation: "LIVES_IN", Target: "Lisbon"}, {Source: "Speaker", Relation: "KNOWS", Target: "Tomas Ruiz"}},
	}
	out, drops := extract.Ground(x, "I moved to PORTO last year.", "Earlier: I met Tomás at work.")
	var kept, facts, dropped []string
	for _, e := range out.Entities {
		kept = append(kept, e.Name)
	}
	for _, f := range out.Facts {
		facts = append(facts, f.Source+" "+f.Relation+" "+f.Target)
	}
	for _, d := range drops {
		dropped = append(dropped, d.What+"/"+d.Reason+": "+d.Text)
	}
	if want := []string{"User", "Speaker", "Porto", "Tomas Ruiz"}; !slices.Equal(kept, want) {
		t.Errorf("entities %q, want %q", kept, want)
	}
	// Tomás is kept, named in the context, but the memory does not state that the
	// speaker knows him: the context said so.
	if want := []string{"User LIVES_IN Porto"}; !slices.Equal(facts, want) {
		t.Errorf("facts %q, want %q", facts, want)
	}
	if want := []string{"entity/ungrounded: Lisbon", "fact/ungrounded: User LIVES_IN Lisbon", "fact/unstated: Speaker KNOWS Tomas Ruiz: "}; !slices.Equal(dropped, want) {
		t.Errorf("drops %q, want %q", dropped, want)
	}
}

// TestGround_Stated: a fact is kept when the memory names its ends and states its text
// (the text names an end, and half its other words are the memory's, by stem, the
// relation's words, stop words and words of time aside); a summary keeps the
// sentences the memory states. The context names entities but states nothing: a fact
// in its words alone is dropped.
func TestGround_Stated(t *testing.T) {
	memory := "Helen: My husband Marcus teaches at Ridgeview High. We moved to Denver last spring."
	context := "Earlier: The wedding is next spring in Accra, and Marcus works for Brightwater Labs."
	fact := func(src, rel, tgt, text string) graph.ExtractedFact {
		return graph.ExtractedFact{Source: src, Relation: rel, Target: tgt, Fact: text}
	}
	x := &graph.Extracted{
		Entities: []graph.ExtractedEntity{
			{Name: "Helen", Summary: "Married to Marcus. A veterinarian at the Maple Street clinic."},
			{Name: "Marcus", Summary: "Helen's husband; teaches at Ridgeview High."},
			{Name: "Ridgeview High"}, {Name: "Denver"}, {Name: "Brightwater Labs"}},
		Facts: []graph.ExtractedFact{
			fact("Marcus", "WORKS_AT", "Ridgeview High", "Marcus teaches at Ridgeview High."),
			fact("Helen", "LIVES_IN", "Denver", "Helen lives in Denver since spring 2025."),
			fact("Helen", "MARRIED_TO", "Marcus", "Helen is married to Marcus."),
			fact("Helen", "HAS_PET", "Marcus", "Helen has a pet named Marcus."),
			fact("Marcus", "WORKS_AT", "Brightwater Labs", "The wedding is next spring in Accra."),
			fact("Marcus", "WORKS_AT", "Brightwater Labs", "Marcus works for Brightwater Labs."),
		},
	}
	out, drops := extract.Ground(x, memory, context)
	var facts, dropped []string
	for _, f := range out.Facts {
		facts = append(facts, f.Fact)
	}
	for _, d := range drops {
		dropped = append(dropped, d.What+"/"+d.Reason+": "+d.Text)
	}
	if want := []string{"Marcus teaches at Ridgeview High.", "Helen lives in Denver since spring 2025.", "Helen is married to Marcus."}; !slices.Equal(facts, want) {
		t.Errorf("facts %q, want %q", facts, want)
	}
	if got := out.Entities[0].Summary; got != "Married to Marcus." {
		t.Errorf("Helen's summary %q, want the sentence the memory states", got)
	}
	if got := out.Entities[1].Summary; got != "Helen's husband; teaches at Ridgeview High." {
		t.Errorf("Marcus's summary %q, want it whole", got)
	}
	want := []string{"fact/unstated: Helen HAS_PET Marcus: Helen has a pet named Marcus.",
		"fact/unstated: Marcus WORKS_AT Brightwater Labs: The wedding is next spring in Accra.",
		"fact/unstated: Marcus WORKS_AT Brightwater Labs: Marcus works for Brightwater Labs.",
		"summary/unstated: Helen: A veterinarian at the Maple Street clinic."}
	if !slices.Equal(dropped, want) {
		t.Errorf("drops %q, want %q", dropped, want)
	}
}
