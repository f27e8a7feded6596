package main

import "testing"

func TestOntologyScore(t *testing.T) {
	conv := ontologyConversation{
		Entities: []typedEntity{
			{Name: "Dana Reyes", Type: "Customer", Attributes: map[string]any{"tier": "gold", "city": "Turin"}},
			{Name: "X200 router", Type: "Product", Attributes: map[string]any{"sku": "X200-EU", "price": 129.5}},
		},
		Edges: []typedEdge{{Source: "Dana Reyes", Relation: "PURCHASED", Target: "X200 router",
			Attributes: map[string]any{"quantity": 3.0}}},
	}
	stored := []typedEntity{
		// right: a first name, a plural, another case and spelling of the sku, a number as text
		{Name: "Dana", Type: "Customer", Attributes: map[string]any{"tier": "Gold", "city": "Milan"}},
		{Name: "X200 Routers", Type: "Concept", Attributes: map[string]any{"sku": "x200 eu", "price": "129.50"}},
		// an entity no label names: its attribute is wrong
		{Name: "Shop", Type: "Customer", Attributes: map[string]any{"tier": "gold"}},
	}
	facts := []typedEdge{
		{Source: "Dana Reyes", Relation: "PURCHASED", Target: "X200 routers", Attributes: map[string]any{"quantity": 3.0}},
		{Source: "Shop", Relation: "PURCHASED", Target: "X200", Attributes: map[string]any{"quantity": 2.0}},
		{Source: "Dana Reyes", Relation: "LIKES", Target: "X200"}, // not a declared edge type
	}
	var s ontologyScore
	s.add(conv, map[string]bool{"PURCHASED": true}, stored, facts)
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"attributes stored", s.attrStored, 5}, {"attributes right", s.attrRight, 3},
		{"labelled attributes", s.attrWant, 4}, {"labelled attributes found", s.attrFound, 3},
		{"typed right", s.typedRight, 1}, {"labelled entities", s.typedWant, 2},
		{"typed edges stored", s.edgeStored, 2}, {"typed edges right", s.edgeRight, 1},
		{"labelled edges", s.edgeWant, 1}, {"labelled edges found", s.edgeFound, 1},
		{"edge attributes stored", s.edgeAttrStored, 2}, {"edge attributes right", s.edgeAttrRight, 1},
		{"labelled edge attributes", s.edgeAttrWant, 1}, {"labelled edge attributes found", s.edgeAttrFound, 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
}

func TestValueKey(t *testing.T) {
	for _, c := range []struct {
		a, b any
		same bool
	}{
		{129.5, "129.50", true}, {3.0, "3", true}, {"X200-EU", "x200 eu", true}, {"Gold", "gold", true},
		{true, "true", true}, {12.0, 12.5, false}, {"gold", "silver", false}, {"AK-2", "AK-20", false},
	} {
		if got := valueKey(c.a) == valueKey(c.b); got != c.same {
			t.Errorf("valueKey(%#v) == valueKey(%#v): %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
