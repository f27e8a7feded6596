package graph_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
)

// TestAttribute_Value: each attribute type takes its own JSON values only, typed as
// stored (a whole number an int64, a date a midnight UTC time, an enum's value as
// declared), and refuses the others.
func TestAttribute_Value(t *testing.T) {
	day := time.Date(2021, 3, 4, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		typ  string
		in   any
		want any // nil: refused
	}{
		{graph.AttrString, "gold", "gold"},
		{graph.AttrString, "  ", nil},
		{graph.AttrString, 42.0, nil},
		{graph.AttrNumber, 3.0, int64(3)},
		{graph.AttrNumber, 129.5, 129.5},
		{graph.AttrNumber, "3", nil},
		{graph.AttrNumber, math.Inf(1), nil},
		{graph.AttrBoolean, true, true},
		{graph.AttrBoolean, "true", nil},
		{graph.AttrDate, "2021-03-04", day},
		{graph.AttrDate, "2021-03-04T15:04:05+02:00", day},
		{graph.AttrDate, "March 2021", nil},
		{graph.AttrDate, "0999-01-01", nil},
		{graph.AttrEnum, "GOLD", "gold"},
		{graph.AttrEnum, "platinum", nil},
		{graph.AttrEnum, 1.0, nil},
	}
	for _, c := range cases {
		a := graph.Attribute{Name: "x", Type: c.typ, Values: []string{"bronze", "gold"}}
		got, ok := a.Value(c.in)
		if (c.want == nil) == ok || (ok && got != c.want) {
			t.Errorf("%s %#v: %#v %v, want %#v", c.typ, c.in, got, ok, c.want)
		}
	}
}

// TestEntityNode_State: the newest statement is an attribute's value, whenever it is
// read; an older one read later joins the history without winning; the same value
// again adds its episode to the entry; a re-run changes nothing; Unstate takes an
// episode's statements out and gives the attribute the newest one left.
func TestEntityNode_State(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	n := &graph.EntityNode{}
	n.State("tier", "gold", t0, "e1")
	n.State("tier", "silver", t0.AddDate(0, 2, 0), "e2")
	n.State("tier", "bronze", t0.AddDate(-1, 0, 0), "e3") // about earlier, read later
	n.State("tier", "silver", t0.AddDate(0, 3, 0), "e4")  // the same again
	n.State("tier", "silver", t0.AddDate(0, 3, 0), "e4")  // a re-run
	n.State("price", int64(3), t0, "e1")
	if n.Attributes["tier"] != "silver" || n.Attributes["price"] != int64(3) || len(n.AttributeHistory) != 4 {
		t.Fatalf("attributes %v, history %+v", n.Attributes, n.AttributeHistory)
	}
	back := graph.DecodeHistory(graph.EncodeHistory(n.AttributeHistory))
	if got := graph.CurrentAttributes(back); got["tier"] != "silver" || got["price"] != int64(3) {
		t.Errorf("read back: %v", got)
	}
	n.Unstate(func(ep string) bool { return ep == "e2" })
	if n.Attributes["tier"] != "silver" { // e4 still says so
		t.Errorf("without e2: %v", n.Attributes)
	}
	n.Unstate(func(ep string) bool { return ep == "e4" })
	if n.Attributes["tier"] != "gold" || len(n.AttributeHistory) != 3 {
		t.Errorf("without e2 and e4: %v %+v", n.Attributes, n.AttributeHistory)
	}
	n.Unstate(func(ep string) bool { return ep == "e1" })
	if _, ok := n.Attributes["price"]; ok || n.Attributes["tier"] != "bronze" {
		t.Errorf("without e1: %v", n.Attributes)
	}
	for i := range 2 * graph.MaxAttributeHistory {
		n.State("tier", string(rune('a'+i%26))+"x", t0.AddDate(0, 0, i), fmt.Sprint("f", i))
	}
	if len(n.AttributeHistory) != graph.MaxAttributeHistory || n.Attributes["tier"] != string(rune('a'+(2*graph.MaxAttributeHistory-1)%26))+"x" {
		t.Errorf("bounded history: %d entries, tier %v", len(n.AttributeHistory), n.Attributes["tier"])
	}
}

// TestOntology_Narrow: a space narrows the deployment's types by name, never widens
// them; an edge type named needs its ends kept; Within passes over names no longer
// declared.
func TestOntology_Narrow(t *testing.T) {
	o := graph.Ontology{
		EntityTypes: []graph.EntityType{{Name: "Customer"}, {Name: "Product"}},
		EdgeTypes:   []graph.EdgeType{{Name: "PURCHASED", SourceTypes: []string{"Customer"}, TargetTypes: []string{"Product"}}, {Name: "LIKES"}},
	}
	got, err := o.Narrow([]string{"Product"}, nil)
	if err != nil || len(got.EntityTypes) != 1 || len(got.EdgeTypes) != 1 || got.EdgeTypes[0].Name != "LIKES" {
		t.Errorf("Product alone: %+v %v; want Product and LIKES (PURCHASED joins Customer)", got, err)
	}
	for _, c := range [][2][]string{{{"Invoice"}, nil}, {nil, {"OWES"}}, {{"Product"}, {"PURCHASED"}}, {{"customer"}, nil}} {
		if _, err := o.Narrow(c[0], c[1]); graph.ErrorCode(err) != graph.EINVALID {
			t.Errorf("Narrow(%v, %v): %v, want EINVALID", c[0], c[1], err)
		}
	}
	if w := o.Within(&graph.SpaceTypes{EntityTypes: []string{"Customer", "Gone"}, EdgeTypes: []string{}}); len(w.EntityTypes) != 1 || len(w.EdgeTypes) != 0 {
		t.Errorf("Within: %+v", w)
	}
	if w := o.Within(nil); len(w.EntityTypes) != 2 || len(w.EdgeTypes) != 2 {
		t.Errorf("Within(nil): %+v", w)
	}
}

// TestTexts_Attributes: a direct fact's attributes are among the texts a memory holds
// (what the credential check reads), decoded: an escape cannot hide a value.
func TestTexts_Attributes(t *testing.T) {
	content := `{"entities":[{"name":"Dana","type":"Customer","summary":"","attributes":{"api":"sk-\u0070roj"}},` +
		`{"name":"Acme","type":"","summary":""}],"facts":[{"source":"Dana","target":"Acme","relation":"BUYS_FROM",` +
		`"fact":"Dana buys from Acme.","valid_at":null,"invalid_at":null,"attributes":{"note":"pin 1234"}}]}`
	texts := graph.Texts(graph.SourceJSON, graph.SourceDirect, content)
	joined := fmt.Sprint(texts)
	for _, want := range []string{"sk-proj", "pin 1234"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the texts %q lack %q", texts, want)
		}
	}
}
