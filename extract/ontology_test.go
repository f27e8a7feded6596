package extract_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// shop is a Customer/Product ontology (and a Supplier, which PURCHASED does not join):
// an attribute of every type, and an edge type with an attribute.
var shop = graph.Ontology{
	EntityTypes: []graph.EntityType{
		{Name: "Customer", Description: "someone who buys from us", Attributes: []graph.Attribute{
			{Name: "tier", Type: graph.AttrEnum, Values: []string{"bronze", "silver", "gold"}, Description: "loyalty tier"},
			{Name: "email", Type: graph.AttrString},
			{Name: "since", Type: graph.AttrDate},
			{Name: "vip", Type: graph.AttrBoolean},
		}},
		{Name: "Product", Attributes: []graph.Attribute{
			{Name: "sku", Type: graph.AttrString},
			{Name: "price", Type: graph.AttrNumber},
		}},
		{Name: "Supplier", Description: "a company we buy from"},
	},
	EdgeTypes: []graph.EdgeType{
		{Name: "PURCHASED", Description: "a customer bought a product", SourceTypes: []string{"Customer"},
			TargetTypes: []string{"Product"}, Attributes: []graph.Attribute{{Name: "quantity", Type: graph.AttrNumber}}},
	},
}

// typedRunner is the pipeline with ont's types.
func (p *pipe) typedRunner(ont graph.Ontology) *extract.Runner {
	opts := p.opts
	opts.EdgeTypes = ont.EdgeTypes
	llm := extract.NewOpenAI(opts, ont.EntityTypes)
	r := p.runner(2, 3)
	r.Extractor, r.Types, r.EdgeTypes = llm, ont.EntityTypes, ont.EdgeTypes
	r.Resolver.Deduper, r.Resolver.Judge = llm, llm
	return r
}

func entity(name, typ string, attrs map[string]any) map[string]any {
	return map[string]any{"name": name, "type": typ, "summary": "", "attributes": attrs}
}

func fact(src, rel, tgt, text string, attrs map[string]any) map[string]any {
	return map[string]any{"source": src, "target": tgt, "relation": rel, "fact": text, "valid_at": nil, "invalid_at": nil,
		"attributes": attrs}
}

// TestOntology_Extraction: with a Customer/Product ontology, a scripted model's
// attributes are stored on the Entity nodes and the PURCHASED edge as properties of
// their names, with their types (an enum's value, a string, a Neo4j date, a boolean,
// a float, an integer); an attribute of the wrong type and one the type does not
// declare are dropped and counted; PURCHASED between a Supplier and a Product keeps
// the generic RELATES_TO with a note; a later memory's value wins and the old one stays
// in the history, an older memory read later does not win; deleting the memory that
// stated the current value gives the attribute back its earlier one. A decoy space with
// the same types and names keeps its own values.
func TestOntology_Extraction(t *testing.T) {
	p := newPipe(t)
	a, decoy := p.space("shop"), p.space("decoy")
	t1 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	p.llm.Answer("Dana Reyes bought three X200 routers", map[string]any{
		"entities": []any{
			entity("Dana Reyes", "Customer", map[string]any{"tier": "Gold", "email": 42, "since": "2021-03-04", "vip": true}),
			entity("X200", "Product", map[string]any{"sku": "X200-EU", "price": 129.5, "colour": "black"}),
			entity("Northwind", "Supplier", nil),
		},
		"facts": []any{
			fact("Dana Reyes", "PURCHASED", "X200", "Dana Reyes bought three X200 routers.", map[string]any{"quantity": 3}),
			fact("Northwind", "PURCHASED", "X200", "Northwind bought X200 routers in bulk.", map[string]any{"quantity": 500}),
		},
	})
	p.llm.Answer("Dana Reyes moved down to silver", map[string]any{
		"entities": []any{entity("Dana Reyes", "Customer", map[string]any{"tier": "silver", "email": nil, "since": nil, "vip": nil})},
		"facts":    []any{},
	})
	p.llm.Answer("Back then Dana Reyes was bronze", map[string]any{
		"entities": []any{entity("Dana Reyes", "Customer", map[string]any{"tier": "bronze"})},
		"facts":    []any{},
	})
	p.llm.Answer("Decoy: Dana Reyes is a bronze customer", map[string]any{
		"entities": []any{entity("Dana Reyes", "Customer", map[string]any{"tier": "bronze", "vip": false})},
		"facts":    []any{},
	})
	p.start(p.typedRunner(shop))
	first := p.addAt(a, "Dana Reyes bought three X200 routers from our shop, which Northwind supplies; she is a gold customer since March 2021.", t1,
		"Routers are Products; their SKU carries the region.")
	p.wait([]*graph.Episode{first}, time.Minute)

	uri := neo4jtest.URI(t)
	count := func(t *testing.T, what, statement string, params map[string]any) {
		t.Helper()
		if n := neo4jtest.CountAt(t, uri, statement, params); n != 1 {
			t.Errorf("%s: %d matches, want 1", what, n)
		}
	}
	g := map[string]any{"g": a}
	count(t, "Customer with typed attributes", `MATCH (n:Entity:Customer {group_id: $g, name: 'Dana Reyes'})
		WHERE n.tier = 'gold' AND n.since = date('2021-03-04') AND valueType(n.since) = 'DATE NOT NULL'
		  AND n.vip = true AND valueType(n.vip) = 'BOOLEAN NOT NULL' AND n.email IS NULL
		RETURN count(n)`, g)
	count(t, "Product with typed attributes", `MATCH (n:Entity:Product {group_id: $g, name: 'X200'})
		WHERE n.sku = 'X200-EU' AND n.price = 129.5 AND valueType(n.price) = 'FLOAT NOT NULL' AND n.colour IS NULL
		RETURN count(n)`, g)
	count(t, "typed PURCHASED edge", `MATCH (:Customer {group_id: $g, name: 'Dana Reyes'})-[r:RELATES_TO {name: 'PURCHASED'}]->(:Product {name: 'X200'})
		WHERE r.group_id = $g AND r.quantity = 3 AND valueType(r.quantity) = 'INTEGER NOT NULL' AND r.note IS NULL
		RETURN count(r)`, g)
	count(t, "disallowed edge kept generic", `MATCH (:Supplier {group_id: $g, name: 'Northwind'})-[r:RELATES_TO]->(:Product {name: 'X200'})
		WHERE r.name = 'RELATES_TO' AND r.note CONTAINS 'PURCHASED' AND r.note CONTAINS 'Supplier' AND r.quantity IS NULL
		RETURN count(r)`, g)
	if n := neo4jtest.CountAt(t, uri, `MATCH ()-[r:RELATES_TO {name: 'PURCHASED'}]->() WHERE r.group_id = $g RETURN count(r)`, g); n != 1 {
		t.Errorf("%d PURCHASED facts; want the customer's alone (never the supplier's retyped)", n)
	}
	// email 42 on the Customer; colour on the Product and quantity on the generic fact;
	// PURCHASED between a Supplier and a Product.
	for drop, want := range map[string]int64{"attribute/wrong_type": 1, "attribute/unknown_attribute": 2, "edge_type/wrong_types": 1} {
		got := int64(0)
		if v, ok := p.metric.Drops.Load(drop); ok {
			got = v.(interface{ Load() int64 }).Load()
		}
		if got != want {
			t.Errorf("memgate_extraction_dropped_total{%s} = %d, want %d", drop, got, want)
		}
	}

	// A later memory changes the tier; one about an earlier time, read after it, does not.
	// Only the first memory's extraction was given its instructions.
	later := p.addAt(a, "Dana Reyes moved down to silver this month.", t1.AddDate(0, 2, 0))
	earlier := p.addAt(a, "Back then Dana Reyes was bronze, in 2020.", t1.AddDate(-1, 0, 0))
	decoyEp := p.addAt(decoy, "Decoy: Dana Reyes is a bronze customer.", t1.AddDate(0, 3, 0))
	p.wait([]*graph.Episode{later, earlier, decoyEp}, time.Minute)
	given := 0
	for _, prompt := range p.llm.Prompts() {
		if strings.Contains(prompt, "Routers are Products; their SKU carries the region.") {
			given++
			if !strings.Contains(prompt, "Dana Reyes bought three X200 routers") {
				t.Errorf("the instructions went with another memory:\n%s", prompt)
			}
		}
	}
	if given != 1 {
		t.Errorf("the first memory's extraction_instructions were in %d prompts, want its one", given)
	}
	ents, _ := p.graphOf(a, "Dana Reyes")
	dana := ents["Dana Reyes"]
	if dana == nil || dana.Attributes["tier"] != "silver" || dana.Attributes["vip"] != true {
		t.Fatalf("Dana after the later memories: %+v; want tier silver (the newest statement), vip kept", dana)
	}
	var tiers []string
	for _, c := range dana.AttributeHistory {
		if c.Name == "tier" {
			tiers = append(tiers, c.Value.(string)+"@"+c.At.Format("2006-01"))
		}
	}
	if strings.Join(tiers, " ") != "bronze@2024-03 gold@2025-03 silver@2025-05" {
		t.Errorf("tier history %v; want bronze, gold, silver by the time each was stated", tiers)
	}
	count(t, "tier silver stored, old values in attribute_history", `MATCH (n:Customer {group_id: $g, name: 'Dana Reyes'})
		WHERE n.tier = 'silver' AND size(n.attribute_history) = 5
		  AND any(h IN n.attribute_history WHERE h CONTAINS '"gold"') AND any(h IN n.attribute_history WHERE h CONTAINS '"bronze"')
		RETURN count(n)`, g)
	count(t, "decoy keeps its own", `MATCH (n:Customer {group_id: $g, name: 'Dana Reyes'}) WHERE n.tier = 'bronze' AND n.vip = false
		AND n.since IS NULL AND size(n.attribute_history) = 2 RETURN count(n)`, map[string]any{"g": decoy})

	// The memory that said silver goes: the tier is gold again, and silver leaves the
	// history with it.
	if err := p.db.DeleteEpisode(context.Background(), later.UUID, graph.Visible{GroupIDs: []string{a}},
		func(*graph.Episode) (*graph.AuditEvent, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	// The memory read after it had it as context, so it is extracted again without it.
	p.wait([]*graph.Episode{earlier}, time.Minute)
	count(t, "tier back to gold", `MATCH (n:Customer {group_id: $g, name: 'Dana Reyes'})
		WHERE n.tier = 'gold' AND n.vip = true AND none(h IN n.attribute_history WHERE h CONTAINS '"silver"')
		RETURN count(n)`, g)
	// The first memory goes too: only the bronze statement is left.
	if err := p.db.DeleteEpisode(context.Background(), first.UUID, graph.Visible{GroupIDs: []string{a}},
		func(*graph.Episode) (*graph.AuditEvent, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	p.wait([]*graph.Episode{earlier}, time.Minute)
	count(t, "only bronze left", `MATCH (n:Customer {group_id: $g, name: 'Dana Reyes'})
		WHERE n.tier = 'bronze' AND n.vip IS NULL AND n.since IS NULL AND size(n.attribute_history) = 1
		RETURN count(n)`, g)
}

// TestOntology_SpaceTypes: a space whose agent's owner narrowed the types to Product
// and Supplier (no edge types) is extracted with those alone: the model is not told
// of Customer or PURCHASED, a Customer it answers all the same gets no type label and
// no attributes, and the Product keeps its own; another space of the same deployment
// still has every type.
func TestOntology_SpaceTypes(t *testing.T) {
	p := newPipe(t)
	narrowed, full := p.space("narrow"), p.space("full")
	answer := map[string]any{
		"entities": []any{
			entity("Dana Reyes", "Customer", map[string]any{"tier": "gold"}),
			entity("X200", "Product", map[string]any{"sku": "X200-EU"}),
		},
		"facts": []any{fact("Dana Reyes", "PURCHASED", "X200", "Dana Reyes bought an X200.", map[string]any{"quantity": 1})},
	}
	p.llm.Answer("Narrow: Dana Reyes bought an X200", answer)
	p.llm.Answer("Full: Dana Reyes bought an X200", answer)
	ep := p.add(narrowed, "Narrow: Dana Reyes bought an X200, she is a gold customer.")
	space, _ := graph.ParseGroupID(narrowed)
	owner, err := p.db.GetAgent(context.Background(), space.Org, space.Agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.db.SetSpaceTypes(context.Background(), space, graph.TypesGuard{CreatedAt: owner.CreatedAt, Owner: owner.OwnerID}, graph.SpaceTypes{EntityTypes: []string{"Product", "Supplier"},
		EdgeTypes: []string{}}, nil); err != nil {
		t.Fatal(err)
	}
	other := p.add(full, "Full: Dana Reyes bought an X200, she is a gold customer.")
	p.start(p.typedRunner(shop))
	p.wait([]*graph.Episode{ep, other}, time.Minute)

	for _, prompt := range p.llm.Prompts() {
		if strings.Contains(prompt, "Narrow: Dana") && (strings.Contains(prompt, "Customer") || strings.Contains(prompt, "PURCHASED")) {
			t.Errorf("the narrowed space's prompt names a type its owner left out:\n%s", prompt)
		}
	}
	uri := neo4jtest.URI(t)
	for _, c := range []struct{ what, query, group string }{
		{"no Customer in the narrowed space", `MATCH (n:Entity {group_id: $g, name: 'Dana Reyes'}) WHERE NOT n:Customer AND n.tier IS NULL RETURN count(n)`, narrowed},
		{"the Product keeps its attributes", `MATCH (n:Product {group_id: $g, name: 'X200'}) WHERE n.sku = 'X200-EU' RETURN count(n)`, narrowed},
		{"no edge attributes", `MATCH ()-[r:RELATES_TO {group_id: $g}]->() WHERE r.quantity IS NULL RETURN count(r)`, narrowed},
		{"every type in the other space", `MATCH (n:Customer {group_id: $g, name: 'Dana Reyes'}) WHERE n.tier = 'gold' RETURN count(n)`, full},
		{"the typed edge in the other space", `MATCH ()-[r:RELATES_TO {group_id: $g, name: 'PURCHASED'}]->() WHERE r.quantity = 1 RETURN count(r)`, full},
	} {
		if n := neo4jtest.CountAt(t, uri, c.query, map[string]any{"g": c.group}); n != 1 {
			t.Errorf("%s: %d matches, want 1", c.what, n)
		}
	}
}
