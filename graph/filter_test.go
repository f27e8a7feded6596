package graph_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
)

var filterShop = graph.Ontology{
	EntityTypes: []graph.EntityType{
		{Name: "Customer", Attributes: []graph.Attribute{
			{Name: "tier", Type: graph.AttrEnum, Values: []string{"bronze", "gold"}},
			{Name: "since", Type: graph.AttrDate},
			{Name: "vip", Type: graph.AttrBoolean},
			{Name: "code", Type: graph.AttrString},
		}},
		{Name: "Product", Attributes: []graph.Attribute{{Name: "price", Type: graph.AttrNumber}, {Name: "code", Type: graph.AttrNumber}}},
		{Name: "Supplier"},
	},
	EdgeTypes: []graph.EdgeType{
		{Name: "PURCHASED", Attributes: []graph.Attribute{{Name: "quantity", Type: graph.AttrNumber}}},
		{Name: "SUPPLIES"},
	},
}

// TestOntology_Filter: what a read's type filters accept, as the store gets it (typed
// values, each form an attribute declared twice takes), and what they refuse naming
// the field.
func TestOntology_Filter(t *testing.T) {
	since := time.Date(2021, 3, 4, 0, 0, 0, 0, time.UTC)
	accepted := []struct {
		name string
		q    graph.TypeQuery
		want string // fmt of the TypeFilter
	}{
		{"nothing", graph.TypeQuery{}, "{[] [] [] []}"},
		{"types, once each", graph.TypeQuery{EntityTypes: []string{"Customer", "Customer"}, EdgeTypes: []string{"SUPPLIES"}},
			"{[Customer] [SUPPLIES] [] []}"},
		{"typed values", graph.TypeQuery{Attributes: map[string]any{"tier": "GOLD", "vip": false, "since": "2021-03-04", "price": 20.0}},
			fmt.Sprintf("{[] [] [{price [20]} {since [%v]} {tier [gold]} {vip [false]}] []}", since)},
		{"text read by the type", graph.TypeQuery{Attributes: map[string]any{"vip": graph.AttributeText("true"), "price": graph.AttributeText("129.5")},
			EdgeAttributes: map[string]any{"quantity": graph.AttributeText("3")}},
			"{[] [] [{price [129.5]} {vip [true]}] [{quantity [3]}]}"},
		{"declared twice: each form", graph.TypeQuery{Attributes: map[string]any{"code": graph.AttributeText("7")}},
			"{[] [] [{code [7 7]}] []}"},
		{"declared twice, of the type asked for", graph.TypeQuery{EntityTypes: []string{"Product"}, Attributes: map[string]any{"code": 7.0}},
			"{[Product] [] [{code [7]}] []}"},
	}
	for _, c := range accepted {
		f, err := filterShop.Filter(c.q)
		if err != nil {
			t.Errorf("%s: refused: %v", c.name, err)
			continue
		}
		if fmt.Sprintf("%v", f) != c.want {
			t.Errorf("%s: %v, want %s", c.name, f, c.want)
		}
	}
	many := make([]string, graph.MaxFilterValues+1)
	for i := range many {
		many[i] = "Customer"
	}
	refused := []struct {
		name  string
		q     graph.TypeQuery
		field string
	}{
		{"undeclared entity type", graph.TypeQuery{EntityTypes: []string{"Invoice"}}, "entity_types"},
		{"another case", graph.TypeQuery{EntityTypes: []string{"customer"}}, "entity_types"},
		{"too many", graph.TypeQuery{EntityTypes: many}, "at most"},
		{"undeclared edge type", graph.TypeQuery{EdgeTypes: []string{"RELATES_TO"}}, "edge_types"},
		{"undeclared attribute", graph.TypeQuery{Attributes: map[string]any{"colour": "red"}}, "attributes"},
		{"attribute of a type not asked for", graph.TypeQuery{EntityTypes: []string{"Supplier"}, Attributes: map[string]any{"tier": "gold"}}, "attributes"},
		{"edge attribute as an entity's", graph.TypeQuery{Attributes: map[string]any{"quantity": 3.0}}, "attributes"},
		{"entity attribute as an edge's", graph.TypeQuery{EdgeAttributes: map[string]any{"tier": "gold"}}, "edge_attributes"},
		{"enum value not listed", graph.TypeQuery{Attributes: map[string]any{"tier": "platinum"}}, "bronze, gold"},
		{"number as a string", graph.TypeQuery{Attributes: map[string]any{"price": "20"}}, "price"},
		{"number text not a number", graph.TypeQuery{Attributes: map[string]any{"price": graph.AttributeText("cheap")}}, "price"},
		{"boolean text not true or false", graph.TypeQuery{Attributes: map[string]any{"vip": graph.AttributeText("yes")}}, "vip"},
		{"not a date", graph.TypeQuery{Attributes: map[string]any{"since": "March 2021"}}, "since"},
		{"null", graph.TypeQuery{Attributes: map[string]any{"tier": nil}}, "null"},
		{"an object", graph.TypeQuery{Attributes: map[string]any{"tier": map[string]any{"$ne": "x"}}}, "object"},
	}
	for _, c := range refused {
		_, err := filterShop.Filter(c.q)
		if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v, want EINVALID naming %s", c.name, err, c.field)
		}
	}
}
