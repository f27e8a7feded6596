package extract

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
)

var shopTypes = graph.Ontology{
	EntityTypes: []graph.EntityType{
		{Name: "Customer", Description: "someone who buys from us", Attributes: []graph.Attribute{
			{Name: "tier", Type: graph.AttrEnum, Values: []string{"bronze", "silver", "gold"}, Description: "loyalty tier"},
			{Name: "since", Type: graph.AttrDate},
			{Name: "vip", Type: graph.AttrBoolean},
		}},
		{Name: "Product", Attributes: []graph.Attribute{{Name: "price", Type: graph.AttrNumber}, {Name: "sku", Type: graph.AttrString}}},
		{Name: "Supplier"},
	},
	EdgeTypes: []graph.EdgeType{{Name: "PURCHASED", SourceTypes: []string{"Customer"}, TargetTypes: []string{"Product"},
		Attributes: []graph.Attribute{{Name: "quantity", Type: graph.AttrNumber}}}},
}

// TestOntology_EveryOutputMode: in every structured-output mode the extraction call
// carries the ontology where that mode puts the schema (json_schema's response_format,
// json_object's response_format.schema, the forced tool's parameters, the prompt's
// instructions): a branch per entity type with attributes, each attribute typed (an
// enum its values, null allowed), the plain branch for the other types, and a branch
// for the edge type with its attribute; the prompt lists the attributes and the edge
// type, and the memory's extraction_instructions. A space's narrower ontology
// (WithOntology) is what its call carries.
func TestOntology_EveryOutputMode(t *testing.T) {
	var mu sync.Mutex
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		body = b
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"recorded","type":"invalid_request_error"}}`)
	}))
	defer srv.Close()
	ep := &graph.Episode{Content: "Dana bought three X200 routers.", ValidAt: time.Date(2025, 7, 10, 0, 0, 0, 0, time.UTC),
		ExtractionInstructions: "Prices are in euros."}
	type request struct {
		Messages []struct {
			Role, Content string
		} `json:"messages"`
		ResponseFormat *struct {
			Schema     map[string]any `json:"schema"`
			JSONSchema *struct {
				Schema map[string]any `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
		Tools []struct {
			Function struct {
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	send := func(t *testing.T, mode string, ctx context.Context) (request, map[string]any) {
		t.Helper()
		opts := OpenAIOptions{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second, Metrics: &Metrics{},
			StructuredOutput: mode, EdgeTypes: shopTypes.EdgeTypes}
		NewOpenAI(opts, shopTypes.EntityTypes).Extract(ctx, ep, nil)
		mu.Lock()
		defer mu.Unlock()
		var req request
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) != 2 {
			t.Fatalf("%s: the request %s (%v)", mode, body, err)
		}
		var schema map[string]any
		switch mode {
		case OutputJSONSchema:
			schema = req.ResponseFormat.JSONSchema.Schema
		case OutputJSONObject:
			schema = req.ResponseFormat.Schema
		case OutputTools:
			schema = req.Tools[0].Function.Parameters
		case OutputPrompt:
			system := req.Messages[0].Content
			i := strings.Index(system, "follow this JSON schema:\n")
			if i < 0 {
				t.Fatalf("prompt mode: no schema in the instructions")
			}
			if err := json.Unmarshal([]byte(system[i+len("follow this JSON schema:\n"):]), &schema); err != nil {
				t.Fatalf("prompt mode: the schema in the instructions: %v", err)
			}
		}
		if schema == nil {
			t.Fatalf("%s: no schema sent", mode)
		}
		return req, schema
	}
	for _, mode := range OutputModes {
		t.Run(mode, func(t *testing.T) {
			req, schema := send(t, mode, context.Background())
			entities := branches(t, schema, "entities", "type")
			if got := entities["Customer"]; !reflect.DeepEqual(got, map[string]any{
				"tier":  map[string]any{"type": []any{"string", "null"}, "enum": []any{"bronze", "silver", "gold", nil}, "description": "loyalty tier"},
				"since": map[string]any{"type": []any{"string", "null"}, "description": "(a date, YYYY-MM-DD)"},
				"vip":   map[string]any{"type": []any{"boolean", "null"}},
			}) {
				t.Errorf("Customer's attributes in the schema: %v", got)
			}
			if got := entities["Product"]; got["price"] == nil || !reflect.DeepEqual(got["price"].(map[string]any)["type"], []any{"number", "null"}) {
				t.Errorf("Product's attributes in the schema: %v", got)
			}
			if got, ok := entities["Supplier|Other"]; !ok || got != nil {
				t.Errorf("the plain branch: %v (present %v); want Supplier and Other, no attributes", got, ok)
			}
			facts := branches(t, schema, "facts", "relation")
			if got := facts["PURCHASED"]; got["quantity"] == nil {
				t.Errorf("PURCHASED's attributes in the schema: %v", got)
			}
			if _, ok := facts[""]; !ok {
				t.Errorf("no plain branch for other relations: %v", facts)
			}
			user := req.Messages[1].Content
			for _, want := range []string{"- Customer: someone who buys from us\n  attributes: tier (one of bronze, silver, gold; loyalty tier), since (date), vip (boolean)",
				"Edge types:\n- PURCHASED: from Customer to Product\n  attributes: quantity (number)", "Prices are in euros."} {
				if !strings.Contains(user, want) {
					t.Errorf("the prompt does not say %q:\n%s", want, user)
				}
			}
			if !strings.Contains(req.Messages[0].Content, `an entity of such a type also has "attributes"`) {
				t.Errorf("the instructions do not explain attributes")
			}
		})
	}
	t.Run("Narrowed", func(t *testing.T) {
		narrow, err := shopTypes.Narrow([]string{"Product", "Supplier"}, []string{})
		if err != nil {
			t.Fatal(err)
		}
		req, schema := send(t, OutputJSONSchema, WithOntology(context.Background(), narrow))
		entities := branches(t, schema, "entities", "type")
		if _, ok := entities["Customer"]; ok || entities["Product"] == nil {
			t.Errorf("the narrowed schema's entity branches: %v", entities)
		}
		if items := schema["properties"].(map[string]any)["facts"].(map[string]any)["items"].(map[string]any); items["anyOf"] != nil {
			t.Errorf("the narrowed schema has edge type branches: %v", items)
		}
		if user := req.Messages[1].Content; strings.Contains(user, "Customer") || strings.Contains(user, "PURCHASED") {
			t.Errorf("the narrowed prompt names a type the space left out:\n%s", user)
		}
	})
}

// branches are the anyOf branches of the schema's list (entities or facts) by the
// enum of their key property ("|"-joined; "" for a branch without one), each with the
// properties of its attributes (nil: none).
func branches(t *testing.T, schema map[string]any, list, key string) map[string]map[string]any {
	t.Helper()
	items := schema["properties"].(map[string]any)[list].(map[string]any)["items"].(map[string]any)
	anyOf, _ := items["anyOf"].([]any)
	if len(anyOf) == 0 {
		t.Fatalf("%s: no branches in %v", list, items)
	}
	out := map[string]map[string]any{}
	for _, b := range anyOf {
		props := b.(map[string]any)["properties"].(map[string]any)
		var names []string
		if enum, ok := props[key].(map[string]any)["enum"].([]any); ok {
			for _, n := range enum {
				names = append(names, n.(string))
			}
		}
		var attrs map[string]any
		if a, ok := props["attributes"].(map[string]any); ok {
			attrs = a["properties"].(map[string]any)
			if req := a["required"].([]any); len(req) != len(attrs) || a["additionalProperties"] != false {
				t.Errorf("%s: attributes %v: every one required, no others", strings.Join(names, "|"), a)
			}
		}
		out[strings.Join(names, "|")] = attrs
	}
	return out
}
