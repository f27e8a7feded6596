package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// shopTyped is a Customer/Product ontology with attributes, and a Supplier that
// SUPPLIES products (an edge type PURCHASED is not).
var shopTyped = graph.Ontology{
	EntityTypes: []graph.EntityType{
		{Name: "Customer", Attributes: []graph.Attribute{
			{Name: "tier", Type: graph.AttrEnum, Values: []string{"bronze", "silver", "gold"}},
			{Name: "since", Type: graph.AttrDate},
			{Name: "vip", Type: graph.AttrBoolean},
		}},
		{Name: "Product", Attributes: []graph.Attribute{{Name: "sku", Type: graph.AttrString}, {Name: "price", Type: graph.AttrNumber}}},
		{Name: "Supplier"},
		{Name: "Person"},
	},
	EdgeTypes: []graph.EdgeType{
		{Name: "PURCHASED", SourceTypes: []string{"Customer"}, TargetTypes: []string{"Product"},
			Attributes: []graph.Attribute{{Name: "quantity", Type: graph.AttrNumber}}},
		{Name: "SUPPLIES", SourceTypes: []string{"Supplier"}, TargetTypes: []string{"Product"}},
	},
}

// ingestTyped runs extraction with ont's types over scope, the scripted LLM answering
// chat and embeddings, until the test ends.
func ingestTyped(t *testing.T, llm *llmtest.Server, ont graph.Ontology, scope string) {
	db := neo4jtest.DB(t)
	opts := extract.OpenAIOptions{BaseURL: llm.BaseURL(), APIKey: "test", Model: "scripted", Timeout: 5 * time.Second,
		MaxConcurrency: 2, MaxRetries: 2, RetryBase: 5 * time.Millisecond, Dimensions: neo4jtest.Dimensions,
		Metrics: &extract.Metrics{}, Log: neo4jtest.Logger(t), EdgeTypes: ont.EdgeTypes}
	r := &extract.Runner{
		Queue: db, Extractor: extract.NewOpenAI(opts, ont.EntityTypes), Types: ont.EntityTypes, EdgeTypes: ont.EdgeTypes,
		Resolver: &extract.Resolver{Know: db, Embedder: extract.NewOpenAI(opts, nil), Now: time.Now},
		Workers:  1, Lease: time.Minute, MaxAttempts: 3, Backoff: 20 * time.Millisecond, Poll: neo4jtest.RunnerPoll,
		Log: neo4jtest.Logger(t), Metrics: &extract.Metrics{}, Scope: scope,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// shopAnswer is the scripted extraction of a shop's memory: two customers, two
// products, a supplier; PURCHASED with quantities, SUPPLIES.
func shopAnswer() map[string]any {
	ent := func(name, typ string, attrs map[string]any) map[string]any {
		return map[string]any{"name": name, "type": typ, "summary": "", "attributes": attrs}
	}
	fct := func(src, rel, tgt, text string, attrs map[string]any) map[string]any {
		return map[string]any{"source": src, "target": tgt, "relation": rel, "fact": text, "valid_at": nil, "invalid_at": nil,
			"attributes": attrs}
	}
	return map[string]any{
		"entities": []any{
			ent("Dana Reyes", "Customer", map[string]any{"tier": "gold", "since": "2021-03-04", "vip": true}),
			ent("Ola Berg", "Customer", map[string]any{"tier": "silver", "vip": false}),
			ent("X200", "Product", map[string]any{"sku": "X200-EU", "price": 129.5}),
			ent("Y7", "Product", map[string]any{"sku": "Y7", "price": 20}),
			ent("Northwind", "Supplier", nil),
		},
		"facts": []any{
			fct("Dana Reyes", "PURCHASED", "X200", "Dana Reyes bought three X200 routers.", map[string]any{"quantity": 3}),
			fct("Ola Berg", "PURCHASED", "Y7", "Ola Berg bought one Y7 cable.", map[string]any{"quantity": 1}),
			fct("Northwind", "SUPPLIES", "X200", "Northwind supplies the X200 routers.", nil),
		},
	}
}

type typedEntity struct {
	ID               string                  `json:"id"`
	GroupID          string                  `json:"group_id"`
	Name             string                  `json:"name"`
	Type             string                  `json:"type"`
	Attributes       map[string]any          `json:"attributes"`
	AttributeHistory []graph.AttributeChange `json:"attribute_history"`
}

type typedFact struct {
	ID         string         `json:"id"`
	GroupID    string         `json:"group_id"`
	Relation   string         `json:"relation"`
	Fact       string         `json:"fact"`
	Attributes map[string]any `json:"attributes"`
	Source     typedEntity    `json:"source"`
	Target     typedEntity    `json:"target"`
}

type typedFound struct {
	Facts    []typedFact   `json:"facts"`
	Entities []typedEntity `json:"entities"`
}

func (f typedFound) relations() []string {
	var out []string
	for _, x := range f.Facts {
		out = append(out, x.Source.Name+" "+x.Relation+" "+x.Target.Name)
	}
	slices.Sort(out)
	return out
}

func entityNames(es []typedEntity) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

// TestOntology_Filters: with a Customer/Product ontology extracted through the
// pipeline (scripted LLM, real Neo4j), search, context, the facts and entities lists
// and MCP's search_memory and list_entities return only what entity_types,
// edge_types, attributes and edge_attributes select, and nothing of a decoy agent (of
// another owner) whose memory has the same names, types and values; entities show
// their attributes (GET one: the history too). A filter never widens what a requester
// sees: the decoy's owner filtering the first agent's memory sees none of it, and an
// agent that does not exist is 404 whatever the filter. What the deployment does not
// declare, and values not of an attribute's type, are 400 in the one error shape.
func TestOntology_Filters(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) { s.Ontology = shopTyped })
	w := newTeamWorld(t, srv.URL, "ontf")
	decoy := "ontf-decoy-" + randomSuffix()
	neo4jtest.Forget(t, decoy)
	w.other.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": decoy}, nil)
	llm := llmtest.New()
	t.Cleanup(llm.Close)
	llm.Answer("the shop's ledger", shopAnswer())
	ingestTyped(t, llm, shopTyped, "agent-"+w.agent+"-")
	ingestTyped(t, llm, shopTyped, "agent-"+decoy+"-")
	var mine, theirs added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent,
		"messages": "From the shop's ledger: Dana Reyes (gold since 2021-03-04, VIP) bought three X200 routers, Ola Berg one Y7 cable; Northwind supplies the X200."}, &mine)
	w.other.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": decoy,
		"messages": "Copied from the shop's ledger: Dana Reyes bought three X200 routers, Ola Berg one Y7 cable; Northwind supplies the X200."}, &theirs)
	waitStatus(t, w.owner, mine.ID)
	waitStatus(t, w.other, theirs.ID)

	search := func(body map[string]any) typedFound {
		t.Helper()
		body["agent_id"] = w.agent
		if body["query"] == nil {
			body["query"] = "Dana Reyes Ola Berg X200 Y7 Northwind routers cable"
		}
		var f typedFound
		w.owner.must(http.StatusOK, "POST", "/v1/memories/search", body, &f)
		for _, e := range f.Entities {
			if e.GroupID != mine.GroupID {
				t.Errorf("search %v: entity %s of %s, not of the agent's space %s", body, e.Name, e.GroupID, mine.GroupID)
			}
		}
		for _, x := range f.Facts {
			if x.GroupID != mine.GroupID {
				t.Errorf("search %v: fact %q of %s", body, x.Fact, x.GroupID)
			}
		}
		return f
	}
	same := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}

	t.Run("Search", func(t *testing.T) {
		all := search(map[string]any{})
		same("no filter: facts", all.relations(), []string{"Dana Reyes PURCHASED X200", "Northwind SUPPLIES X200", "Ola Berg PURCHASED Y7"})
		same("entity_types Customer", entityNames(search(map[string]any{"entity_types": []string{"Customer"}, "include": []string{"entities"}}).Entities),
			[]string{"Dana Reyes", "Ola Berg"})
		same("entity_types Supplier: facts", search(map[string]any{"entity_types": []string{"Supplier"}, "include": []string{"facts"}}).relations(),
			[]string{"Northwind SUPPLIES X200"})
		same("edge_types PURCHASED", search(map[string]any{"edge_types": []string{"PURCHASED"}, "include": []string{"facts"}}).relations(),
			[]string{"Dana Reyes PURCHASED X200", "Ola Berg PURCHASED Y7"})
		same("edge_attributes quantity 3", search(map[string]any{"edge_attributes": map[string]any{"quantity": 3}}).relations(),
			[]string{"Dana Reyes PURCHASED X200"})
		gold := search(map[string]any{"attributes": map[string]any{"tier": "gold", "vip": true, "since": "2021-03-04"}})
		same("attributes of gold customers: entities", entityNames(gold.Entities), []string{"Dana Reyes"})
		same("attributes of gold customers: facts (an end has them)", gold.relations(), []string{"Dana Reyes PURCHASED X200"})
		same("attributes price 20 (a whole number as 20.0)", entityNames(search(map[string]any{"attributes": map[string]any{"price": 20.0}}).Entities),
			[]string{"Y7"})
		same("enum without case", entityNames(search(map[string]any{"attributes": map[string]any{"tier": "SILVER"}}).Entities), []string{"Ola Berg"})
		if n := len(gold.Entities); n == 1 {
			a := gold.Entities[0].Attributes
			if a["tier"] != "gold" || a["vip"] != true || a["since"] != "2021-03-04" {
				t.Errorf("Dana Reyes shows attributes %v", a)
			}
		}
		// From a center too (the walk's query): only the typed hits.
		if len(gold.Entities) == 1 {
			walk := search(map[string]any{"query": "", "center_entity_id": gold.Entities[0].ID, "edge_types": []string{"PURCHASED"},
				"entity_types": []string{"Product"}})
			same("walk: Products", entityNames(walk.Entities), []string{"X200"})
			same("walk: PURCHASED with a Product", walk.relations(), []string{"Dana Reyes PURCHASED X200"})
		}
	})

	t.Run("Lists", func(t *testing.T) {
		var facts struct{ Items []typedFact }
		w.owner.must(http.StatusOK, "GET", "/v1/facts?agent_id="+w.agent+"&edge_types=PURCHASED&"+url.QueryEscape("edge_attributes[quantity]")+"=1", nil, &facts)
		same("facts list, PURCHASED quantity 1", typedFound{Facts: facts.Items}.relations(), []string{"Ola Berg PURCHASED Y7"})
		w.owner.must(http.StatusOK, "GET", "/v1/facts?agent_id="+w.agent+"&entity_types=Customer,Supplier&"+url.QueryEscape("attributes[vip]")+"=false", nil, &facts)
		same("facts list, an end a customer not VIP", typedFound{Facts: facts.Items}.relations(), []string{"Ola Berg PURCHASED Y7"})
		var ents struct{ Items []typedEntity }
		w.owner.must(http.StatusOK, "GET", "/v1/entities?agent_id="+w.agent+"&entity_types=Customer,Product&"+url.QueryEscape("attributes[price]")+"=129.5", nil, &ents)
		same("entities list, price 129.5", entityNames(ents.Items), []string{"X200"})
		w.owner.must(http.StatusOK, "GET", "/v1/entities?agent_id="+w.agent+"&type=Customer&"+url.QueryEscape("attributes[since]")+"=2021-03-04", nil, &ents)
		same("entities list, type Customer since", entityNames(ents.Items), []string{"Dana Reyes"})
		if len(ents.Items) == 1 {
			var one typedEntity
			w.owner.must(http.StatusOK, "GET", "/v1/entities/"+ents.Items[0].ID, nil, &one)
			if one.Attributes["tier"] != "gold" || len(one.AttributeHistory) != 3 {
				t.Errorf("GET Dana Reyes: attributes %v, history %+v; want gold and three entries", one.Attributes, one.AttributeHistory)
			}
		}
		// The decoy's owner lists its own: the same names, its space alone.
		w.other.must(http.StatusOK, "GET", "/v1/entities?agent_id="+decoy+"&entity_types=Customer", nil, &ents)
		if len(ents.Items) != 2 || ents.Items[0].GroupID == mine.GroupID {
			t.Errorf("the decoy's customers: %+v", ents.Items)
		}
	})

	t.Run("Context", func(t *testing.T) {
		var tc struct {
			Context  string
			Facts    []string
			Entities []string
		}
		w.owner.must(http.StatusOK, "POST", "/v1/agents/"+w.agent+"/context", map[string]any{
			"query": "who bought what: Dana Reyes, Ola Berg, X200, Y7, Northwind", "edge_types": []string{"SUPPLIES"}}, &tc)
		if !strings.Contains(tc.Context, "Northwind supplies") || len(tc.Facts) != 1 {
			t.Errorf("context with edge_types SUPPLIES: %d facts:\n%s", len(tc.Facts), tc.Context)
		}
	})

	t.Run("MCP", func(t *testing.T) {
		s := mcpSession(t, srv.URL, matrixKeys["trusted"], w.owner.requester)
		var f typedFound
		if !callTool(t, s, "search_memory", map[string]any{"agent_id": w.agent, "query": "Dana Reyes Ola Berg X200 Y7",
			"edge_types": []string{"PURCHASED"}, "attributes": map[string]any{"tier": "silver"}}, &f) {
			t.Fatalf("search_memory refused")
		}
		same("search_memory PURCHASED by silver", f.relations(), []string{"Ola Berg PURCHASED Y7"})
		var page struct{ Items []typedEntity }
		callTool(t, s, "list_entities", map[string]any{"agent_id": w.agent, "entity_types": []string{"Product"},
			"attributes": map[string]any{"sku": "Y7"}}, &page)
		same("list_entities Product sku Y7", entityNames(page.Items), []string{"Y7"})
		var refused struct{ Error struct{ Code string } }
		if callTool(t, s, "search_memory", map[string]any{"agent_id": w.agent, "query": "x", "edge_types": []string{"BOUGHT"}}, &refused) ||
			refused.Error.Code != "invalid" {
			t.Errorf("search_memory with an undeclared edge type: %+v", refused)
		}
	})

	t.Run("NeverWidens", func(t *testing.T) {
		// The decoy's owner cannot read the agent's private space: its filters find none of it.
		for _, body := range []map[string]any{
			{"entity_types": []string{"Customer"}},
			{"edge_types": []string{"PURCHASED"}, "attributes": map[string]any{"tier": "gold"}},
			{"edge_attributes": map[string]any{"quantity": 3}, "scopes": []string{}},
		} {
			body["agent_id"], body["query"] = w.agent, "Dana Reyes Ola Berg X200 Y7 Northwind"
			var f typedFound
			w.other.must(http.StatusOK, "POST", "/v1/memories/search", body, &f)
			if len(f.Facts)+len(f.Entities) != 0 {
				t.Errorf("another requester's search %v found %+v", body, f)
			}
		}
		var facts struct{ Items []typedFact }
		w.other.must(http.StatusOK, "GET", "/v1/facts?agent_id="+w.agent+"&edge_types=PURCHASED", nil, &facts)
		var ents struct{ Items []typedEntity }
		w.other.must(http.StatusOK, "GET", "/v1/entities?agent_id="+w.agent+"&entity_types=Customer", nil, &ents)
		if len(facts.Items)+len(ents.Items) != 0 {
			t.Errorf("another requester lists %d facts and %d entities of the agent's private space", len(facts.Items), len(ents.Items))
		}
		w.other.must(http.StatusNotFound, "GET", "/v1/facts?agent_id=ontf-nobody-"+randomSuffix()+"&edge_types=PURCHASED", nil, nil)
		w.other.must(http.StatusNotFound, "POST", "/v1/memories/search", map[string]any{"agent_id": "ontf-nobody-" + randomSuffix(),
			"query": "Dana", "entity_types": []string{"Customer"}}, nil)
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		refused := func(what, method, path string, body any) {
			t.Helper()
			var text string
			if body != nil {
				text = mustJSON(t, body)
			}
			resp, out := doMalformed(t, method, srv.URL+path, w.owner.header(), text)
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("%s: %s %s answered %d: %s", what, method, path, resp.StatusCode, out)
				return
			}
			mustErrorBody(t, resp, out, http.StatusBadRequest, "invalid")
		}
		many := make([]string, 21)
		for i := range many {
			many[i] = "Customer"
		}
		for name, body := range map[string]map[string]any{
			"entity type undeclared":         {"entity_types": []string{"Invoice"}},
			"entity type in another case":    {"entity_types": []string{"customer"}},
			"the Entity label":               {"entity_types": []string{"Entity"}},
			"too many entity types":          {"entity_types": many},
			"edge type undeclared":           {"edge_types": []string{"BOUGHT"}},
			"edge type a free relation":      {"edge_types": []string{"RELATES_TO"}},
			"attribute undeclared":           {"attributes": map[string]any{"colour": "black"}},
			"attribute of another type":      {"entity_types": []string{"Supplier"}, "attributes": map[string]any{"tier": "gold"}},
			"edge attribute as an entity's":  {"attributes": map[string]any{"quantity": 3}},
			"entity attribute as an edge's":  {"edge_attributes": map[string]any{"tier": "gold"}},
			"edge attribute of another type": {"edge_types": []string{"SUPPLIES"}, "edge_attributes": map[string]any{"quantity": 3}},
			"enum value not listed":          {"attributes": map[string]any{"tier": "platinum"}},
			"number as text":                 {"attributes": map[string]any{"price": "20"}},
			"boolean as text":                {"attributes": map[string]any{"vip": "true"}},
			"not a date":                     {"attributes": map[string]any{"since": "March 2021"}},
			"a reserved property":            {"attributes": map[string]any{"group_id": mine.GroupID}},
		} {
			body["query"] = "Dana"
			refused(name, "POST", "/v1/agents/"+w.agent+"/context", body)
			body["agent_id"] = w.agent
			refused(name, "POST", "/v1/memories/search", body)
		}
		for name, query := range map[string]string{
			"entity type undeclared":    "entity_types=Invoice",
			"value not a number":        url.QueryEscape("attributes[price]") + "=cheap",
			"boolean not true or false": url.QueryEscape("attributes[vip]") + "=yes",
			"nested object":             url.QueryEscape("attributes[tier][x]") + "=gold",
			"type with entity_types":    "type=Customer&entity_types=Product",
			"edge types on entities":    "edge_types=PURCHASED",
			"empty attribute name":      url.QueryEscape("attributes[]") + "=gold",
		} {
			refused(name, "GET", "/v1/entities?agent_id="+w.agent+"&"+query, nil)
		}
		refused("a misspelt filter", "GET", "/v1/facts?agent_id="+w.agent+"&edge_type=PURCHASED", nil)
		refused("edge attribute not a number", "GET", "/v1/facts?agent_id="+w.agent+"&"+url.QueryEscape("edge_attributes[quantity]")+"=three", nil)
		refused("edge type undeclared", "GET", "/v1/facts?agent_id="+w.agent+"&edge_types=PURCHASED,BOUGHT", nil)
	})
}
