package extract_test

import (
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

// TestClean_RelationTypes (issue 31, point 7): a built-in relation whose ends come the
// wrong way round is turned round, one whose ends are of other default types is
// dropped (wrong_types), and ends of no type or of a deployment's own types pass.
func TestClean_RelationTypes(t *testing.T) {
	types := append(slices.Clone(extract.DefaultEntityTypes), extract.EntityType{Name: "Company", Description: "a firm"})
	x := &graph.Extracted{
		Entities: []graph.ExtractedEntity{{Name: "Tomás Ruiz", Type: "Person"}, {Name: "Northwind", Type: "Organization"},
			{Name: "Priya", Type: "Person"}, {Name: "Contoso", Type: "Organization"}, {Name: "Oslo", Type: "Location"},
			{Name: "Rex"}, {Name: "Fabrikam", Type: "Company"}},
		Facts: []graph.ExtractedFact{
			{Source: "Northwind", Relation: "WORKS_AT", Target: "Tomás Ruiz"},
			{Source: "Priya", Relation: "LIVES_IN", Target: "Contoso", Fact: "Priya is allergic to peanuts."},
			{Source: "Priya", Relation: "LIVES_IN", Target: "Oslo"},
			{Source: "Rex", Relation: "LIVES_IN", Target: "Oslo"},
			{Source: "Priya", Relation: "WORKS_AT", Target: "Fabrikam"},
			{Source: "Oslo", Relation: "LIKES", Target: "Priya"},
		},
	}
	out, drops := extract.Clean(x, types)
	var got []string
	for _, f := range out.Facts {
		got = append(got, f.Source+" "+f.Relation+" "+f.Target)
	}
	want := []string{"Tomás Ruiz WORKS_AT Northwind", "Priya LIVES_IN Oslo", "Rex LIVES_IN Oslo", "Priya WORKS_AT Fabrikam", "Oslo LIKES Priya"}
	if !slices.Equal(got, want) {
		t.Errorf("facts %q, want %q", got, want)
	}
	if len(drops) != 1 || drops[0].Reason != "wrong_types" || !strings.Contains(drops[0].Text, "Contoso") {
		t.Errorf("drops %+v, want Priya LIVES_IN Contoso as wrong_types", drops)
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
