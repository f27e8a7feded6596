package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
)

// TestTypedBranchesOpenAsPlain: a server that constrains the output to the schema
// makes the model write an object's properties in the order the schema gives them.
// A typed entity's or fact's branch must open with the plain branch's properties and
// end with "attributes", in the request as the server receives it (in json_schema
// and in json_object, where the schema is moved beside), or the model's opening
// "name" leaves it the plain branch alone: no type, no attributes.
func TestTypedBranchesOpenAsPlain(t *testing.T) {
	types := []EntityType{{Name: "Customer", Attributes: []graph.Attribute{{Name: "tier", Type: graph.AttrEnum, Values: []string{"gold"}}}},
		{Name: "Person"}}
	edges := []EdgeType{{Name: "PURCHASED", Attributes: []graph.Attribute{{Name: "quantity", Type: graph.AttrNumber}}}}
	for _, mode := range []string{OutputJSONSchema, OutputJSONObject} {
		t.Run(mode, func(t *testing.T) {
			var body []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ = io.ReadAll(r.Body)
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"error":{"message":"recorded","type":"invalid_request_error"}}`)
			}))
			defer srv.Close()
			o := NewOpenAI(OpenAIOptions{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second, Metrics: &Metrics{},
				StructuredOutput: mode, EdgeTypes: edges}, types)
			o.Extract(context.Background(), &graph.Episode{Content: "Dana bought two.", ValidAt: time.Now()}, nil)
			format := field(t, body, "response_format")
			var schema json.RawMessage
			if mode == OutputJSONSchema {
				schema = field(t, field(t, format, "json_schema"), "schema")
			} else {
				schema = field(t, format, "schema")
			}
			for _, list := range []string{"entities", "facts"} {
				var branches []json.RawMessage
				if err := json.Unmarshal(field(t, field(t, field(t, field(t, schema, "properties"), list), "items"), "anyOf"), &branches); err != nil {
					t.Fatal(err)
				}
				plain := keysInOrder(t, field(t, branches[len(branches)-1], "properties"))
				if len(branches) != 2 || slices.Contains(plain, "attributes") {
					t.Fatalf("%s: %d branches, the plain one %v", list, len(branches), plain)
				}
				if typed := keysInOrder(t, field(t, branches[0], "properties")); !slices.Equal(typed, append(plain, "attributes")) {
					t.Errorf("%s: the typed branch's properties are %v, want %v then attributes", list, typed, plain)
				}
			}
		})
	}
}

func field(t *testing.T, raw []byte, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m[name] == nil {
		t.Fatalf("no %q in %s (%v)", name, raw, err)
	}
	return m[name]
}

// keysInOrder are an object's keys in the order written.
func keysInOrder(t *testing.T, raw []byte) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	var keys []string
	if _, err := d.Token(); err != nil {
		t.Fatal(err)
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
