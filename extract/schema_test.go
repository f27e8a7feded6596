package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph"
)

var updateSchemas = flag.Bool("update-schemas", false, "write testdata/schemas/*.json from what the calls send")

// TestAnswerSchemas holds the JSON schemas the model is sent to what they were when
// extraction's quality was measured with a real model (testdata/schemas, written by
// the hand-built schemas before they were derived from the answer types). Each call
// is made against a server that records the request and refuses it; the schema is
// read off the wire, as the server receives it. The comparison ignores whitespace
// only: a server that constrains the output to a schema writes its properties in the
// order given, and outside json_schema the schema's text is part of the prompt, so
// the order of keys is part of what the model sees.
func TestAnswerSchemas(t *testing.T) {
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
	o := NewOpenAI(OpenAIOptions{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second, Metrics: &Metrics{},
		StructuredOutput: OutputJSONSchema}, DefaultEntityTypes)
	ctx := context.Background()
	ep := &graph.Episode{Content: "Dana Reyes works at Globex.", ValidAt: time.Date(2025, 7, 10, 0, 0, 0, 0, time.UTC)}
	calls := map[string]func(){
		"extraction":     func() { o.Extract(ctx, ep, nil) },
		"summary":        func() { o.Summarize(ctx, []string{"a"}, 100) },
		"reflection":     func() { o.Reflect(ctx, []string{"a"}, []string{"b"}, 100) },
		"same_entities":  func() { o.SameEntities(ctx, []NamePair{{Extracted: "a", Existing: "b"}}) },
		"contradictions": func() { o.Contradicts(ctx, []FactPair{{New: &graph.Fact{}, Stored: &graph.Fact{}}}) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			call()
			mu.Lock()
			var req struct {
				ResponseFormat struct {
					JSONSchema struct {
						Name   string          `json:"name"`
						Schema json.RawMessage `json:"schema"`
					} `json:"json_schema"`
				} `json:"response_format"`
			}
			err := json.Unmarshal(body, &req)
			mu.Unlock()
			sent := req.ResponseFormat.JSONSchema
			if err != nil || sent.Name != name || len(sent.Schema) == 0 {
				t.Fatalf("the call sent no schema named %s (%v): %+v", name, err, sent)
			}
			path := filepath.Join("testdata", "schemas", name+".json")
			if *updateSchemas {
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, sent.Schema, "", "  "); err != nil {
					t.Fatal(err)
				}
				pretty.WriteByte('\n')
				if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./extract -run TestAnswerSchemas -update-schemas writes it)", err)
			}
			var want, got bytes.Buffer
			if err := json.Compact(&want, golden); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			json.Compact(&got, sent.Schema)
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				var g, w any
				json.Unmarshal(got.Bytes(), &g)
				json.Unmarshal(want.Bytes(), &w)
				t.Errorf("the %s schema sent differs from %s (the same schema in another key order: %v)\n got: %s\nwant: %s",
					name, path, reflect.DeepEqual(g, w), got.Bytes(), want.Bytes())
			}
		})
	}
}

// TestSummarize_MissingSummary: the summary's Go type is a string, as its schema says,
// and an answer without one is still malformed (retried, then an error), while an
// empty one is a summary; a reflection without rules has none.
func TestSummarize_MissingSummary(t *testing.T) {
	llm := llmtest.New()
	t.Cleanup(llm.Close)
	llm.Answer("no summary", map[string]any{"text": "Ana lives in Zürich."})
	llm.Answer("null summary", map[string]any{"summary": nil, "rules": []string{}})
	llm.Answer("empty summary", map[string]any{"summary": ""})
	llm.Answer("no rules", map[string]any{"summary": "Ana lives in Zürich."})
	o := NewOpenAI(OpenAIOptions{BaseURL: llm.BaseURL(), Model: "m", Timeout: 5 * time.Second, MaxRetries: 1,
		RetryBase: time.Millisecond, Metrics: &Metrics{}}, DefaultEntityTypes)
	ctx := context.Background()
	for _, text := range []string{"no summary", "null summary"} {
		if s, err := o.Summarize(ctx, []string{text}, 100); err == nil {
			t.Errorf("%s: summary %q, no error", text, s)
		}
		if s, _, err := o.Reflect(ctx, []string{text}, nil, 100); err == nil {
			t.Errorf("%s: reflection %q, no error", text, s)
		}
	}
	if s, err := o.Summarize(ctx, []string{"empty summary"}, 100); s != "" || err != nil {
		t.Errorf("empty summary: %q, %v", s, err)
	}
	if s, rules, err := o.Reflect(ctx, []string{"no rules"}, nil, 100); s != "Ana lives in Zürich." || rules != nil || err != nil {
		t.Errorf("no rules: %q, %q, %v", s, rules, err)
	}
}

// TestExtract_TimesResolvedInPrompt: the model reads a relative time of the current
// episode, and of an earlier one, with the date it names beside it, each against its
// own episode's reference time.
func TestExtract_TimesResolvedInPrompt(t *testing.T) {
	llm := llmtest.New()
	t.Cleanup(llm.Close)
	llm.Answer("I left Initech yesterday.", map[string]any{"entities": []any{}, "facts": []any{}})
	o := NewOpenAI(OpenAIOptions{BaseURL: llm.BaseURL(), Model: "m", Timeout: 5 * time.Second, MaxRetries: 1,
		RetryBase: time.Millisecond, Metrics: &Metrics{}}, DefaultEntityTypes)
	earlier := &graph.Episode{Content: "Dana (user): I met Bob last Friday.", ValidAt: time.Date(2024, 12, 30, 9, 0, 0, 0, time.UTC)}
	ep := &graph.Episode{Content: "Dana (user): I left Initech yesterday.", ValidAt: time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)}
	if _, err := o.Extract(context.Background(), ep, []*graph.Episode{earlier}); err != nil {
		t.Fatal(err)
	}
	prompts := llm.Prompts()
	if len(prompts) != 1 {
		t.Fatalf("%d prompts, want 1", len(prompts))
	}
	current := prompts[0][strings.Index(prompts[0], "<current_episode>"):]
	if !strings.Contains(current, "I left Initech yesterday (31 December 2024).") {
		t.Errorf("the current episode reads %q, want yesterday resolved to 31 December 2024", current)
	}
	if !strings.Contains(prompts[0], "I met Bob last Friday (27 December 2024).") {
		t.Errorf("the earlier episode is not resolved against its own time: %q", prompts[0])
	}
}

// TestPairAnswers_OneKeyPerPair asks about three pairs: the schema sent requires an
// answer for each of the three, in order, and allows no other key, and the answers
// come back in the pairs' order.
func TestPairAnswers_OneKeyPerPair(t *testing.T) {
	llm := llmtest.New()
	defer llm.Close()
	var mu sync.Mutex
	var sent []byte
	recorder := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = b
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		httputil.NewSingleHostReverseProxy(mustURL(t, llm.URL)).ServeHTTP(w, r)
	}))
	defer recorder.Close()
	llm.Answer(`"Ann" / "Anne"`, map[string]any{"pair_1": true, "pair_2": false, "pair_3": true})
	o := NewOpenAI(OpenAIOptions{BaseURL: recorder.URL + "/v1", Model: "m", Timeout: 5 * time.Second, Metrics: &Metrics{},
		StructuredOutput: OutputJSONSchema}, DefaultEntityTypes)
	same, err := o.SameEntities(context.Background(), []NamePair{{Extracted: "Ann", Existing: "Anne"},
		{Extracted: "Bo", Existing: "Bob"}, {Extracted: "Cy", Existing: "Cyrus"}})
	if err != nil || !reflect.DeepEqual(same, []bool{true, false, true}) {
		t.Fatalf("answers %v (%v), want [true false true]", same, err)
	}
	var req struct {
		ResponseFormat struct {
			JSONSchema struct {
				Schema struct {
					Properties           map[string]json.RawMessage `json:"properties"`
					Required             []string                   `json:"required"`
					AdditionalProperties *bool                      `json:"additionalProperties"`
				} `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	mu.Lock()
	defer mu.Unlock()
	if err := json.Unmarshal(sent, &req); err != nil {
		t.Fatal(err)
	}
	s := req.ResponseFormat.JSONSchema.Schema
	if want := []string{"pair_1", "pair_2", "pair_3"}; !reflect.DeepEqual(s.Required, want) || len(s.Properties) != 3 ||
		s.AdditionalProperties == nil || *s.AdditionalProperties {
		t.Errorf("schema requires %v of %d properties (additional %v), want %v and no other", s.Required, len(s.Properties),
			s.AdditionalProperties, want)
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
