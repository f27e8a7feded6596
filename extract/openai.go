package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/memgate/memgate/graph"
)

// OpenAIOptions configure the client for any OpenAI-compatible endpoint (OpenAI,
// Ollama, vLLM, llama.cpp server).
type OpenAIOptions struct {
	BaseURL        string // empty: api.openai.com
	APIKey         string
	Model          string
	Timeout        time.Duration // per call
	MaxConcurrency int           // calls in flight at once, across all workers
	MaxRetries     int           // after the first try, on 429, 5xx, timeouts and unparseable output
	RetryBase      time.Duration // first retry delay, doubled per retry, with jitter
	Dimensions     int           // embeddings
	// QueryPrefix and DocumentPrefix begin the texts EmbedQuery and Embed send
	// (embedder.query_prefix, embedder.document_prefix).
	QueryPrefix, DocumentPrefix string
	// StructuredOutput is how a chat call asks for JSON: one of OutputModes, or
	// OutputAuto (also when empty).
	StructuredOutput string
	MaxTokens        int // per chat call; 0: 2048
	// EdgeTypes are the deployment's edge types (ingest.edge_types); the entity types
	// are NewOpenAI's.
	EdgeTypes []EdgeType
	Metrics   *Metrics
	Log       *slog.Logger
	// Tracer makes a span of every attempt of a call (trace.go); nil: tracing is off.
	Tracer trace.TracerProvider
	// CountTokens counts the tokens of a text with the configured tokenizer
	// (memory.context_tokenizer), for the calls whose answer reports none; nil: a token per 4
	// bytes.
	CountTokens func(string) int
}

// Structured-output modes (llm.structured_output): how a chat call asks for JSON.
const (
	OutputAuto       = "auto"        // json_schema, moving down OutputModes once when the server refuses a mode
	OutputJSONSchema = "json_schema" // response_format json_schema, strict (OpenAI, vLLM, Ollama, llama.cpp's server)
	OutputJSONObject = "json_object" // response_format json_object with the schema in it (llama-cpp-python)
	OutputTools      = "tools"       // one function whose parameters are the schema, its call forced
	OutputPrompt     = "prompt"      // no format asked for: the JSON asked for in words, read leniently
)

// OutputModes are the structured-output modes in the order auto tries them.
var OutputModes = []string{OutputJSONSchema, OutputJSONObject, OutputTools, OutputPrompt}

// OpenAI is the LLM extractor and embedder through go-openai.
type OpenAI struct {
	opts   OpenAIOptions
	client *openai.Client
	tracer trace.Tracer
	slots  chan struct{}
	// ontology is the deployment's: the types every extraction may assign unless its
	// context narrows them (WithOntology); schema is its extraction schema.
	ontology graph.Ontology
	schema   json.RawMessage

	mu   sync.Mutex
	mode string // the structured-output mode in use
	auto bool   // mode may still move down OutputModes
}

// NewOpenAI builds the client; types are the entity types the extractor may assign
// (and opts.EdgeTypes the edge types).
func NewOpenAI(opts OpenAIOptions, types []EntityType) *OpenAI {
	cfg := openai.DefaultConfig(opts.APIKey)
	if opts.BaseURL != "" {
		cfg.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	}
	cfg.HTTPClient = compatible{&http.Client{}} // each call's own time: watch (chat), embed
	if opts.RetryBase == 0 {
		opts.RetryBase = 500 * time.Millisecond
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = 2048
	}
	o := &OpenAI{opts: opts, client: openai.NewClientWithConfig(cfg), slots: make(chan struct{}, max(opts.MaxConcurrency, 1)),
		ontology: graph.Ontology{EntityTypes: types, EdgeTypes: opts.EdgeTypes}, mode: opts.StructuredOutput, tracer: tracerOf(opts.Tracer)}
	o.schema = extractionSchema(o.ontology)
	if o.mode == "" || o.mode == OutputAuto {
		o.mode, o.auto = OutputJSONSchema, true
	}
	return o
}

// compatible meets OpenAI-compatible servers where they differ from OpenAI's API: it
// sends a json_object request with its schema where llama-cpp-python reads it,
// response_format.schema (go-openai writes a schema only under json_schema), and reads
// the one JSON body a server answers a streamed request with as the stream it stands
// for (asEvents).
type compatible struct{ next *http.Client }

func (t compatible) Do(r *http.Request) (*http.Response, error) {
	traceparentTo(r)
	if r.Body == nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		return t.next.Do(r)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	// Raw below the top: the schema goes on with its keys in the order written, the
	// order a constraining server makes the model write them in (answerSchema).
	var req, f, named map[string]json.RawMessage
	var typ string
	if json.Unmarshal(body, &req) == nil && json.Unmarshal(req["response_format"], &f) == nil &&
		json.Unmarshal(f["type"], &typ) == nil && typ == string(openai.ChatCompletionResponseFormatTypeJSONObject) &&
		json.Unmarshal(f["json_schema"], &named) == nil && named != nil {
		f["schema"] = named["schema"]
		delete(f, "json_schema")
		if format, err := json.Marshal(f); err == nil {
			req["response_format"] = format
			if moved, err := json.Marshal(req); err == nil {
				body = moved
			}
		}
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	resp, err := t.next.Do(r)
	var streamed bool
	if err != nil || json.Unmarshal(req["stream"], &streamed) != nil || !streamed || resp.StatusCode != http.StatusOK ||
		strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	events := asEvents(answer)
	resp.Header.Set("Content-Type", "text/event-stream")
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(events)), int64(len(events))
	return resp, nil
}

// maxAnswerBytes bounds a chat answer read whole.
const maxAnswerBytes = 8 << 20

// asEvents is a chat completion answered as one JSON body written as the server-sent
// events a streamed answer is: one chunk with each choice's message as its delta (its
// content, or its tool calls), its finish reason and the answer's usage (in the same
// chunk, so that a reading that stops once the answer has ended still counts it), and
// [DONE]. A body that is not a chat completion is passed on as it is, and
// the stream reader reports it (an error object) or finds no answer in it.
func asEvents(body []byte) []byte {
	var whole openai.ChatCompletionResponse
	if json.Unmarshal(body, &whole) != nil || len(whole.Choices) == 0 {
		return body
	}
	chunk := openai.ChatCompletionStreamResponse{ID: whole.ID, Object: "chat.completion.chunk", Created: whole.Created, Model: whole.Model}
	for _, c := range whole.Choices {
		calls := make([]openai.ToolCall, len(c.Message.ToolCalls))
		for i, call := range c.Message.ToolCalls {
			calls[i] = call
			calls[i].Index = &i
		}
		chunk.Choices = append(chunk.Choices, openai.ChatCompletionStreamChoice{Index: c.Index, FinishReason: c.FinishReason,
			Delta: openai.ChatCompletionStreamChoiceDelta{Role: c.Message.Role, Content: c.Message.Content, ToolCalls: calls}})
	}
	if whole.Usage.PromptTokens+whole.Usage.CompletionTokens > 0 {
		chunk.Usage = &whole.Usage
	}
	b, _ := json.Marshal(chunk)
	return fmt.Appendf(nil, "data: %s\n\ndata: [DONE]\n\n", b)
}

// extraction is an extraction call's answer, as the model writes it; the schema it is
// asked to follow is derived from it (extractionSchema).
type extraction struct {
	Entities []extractionEntity `json:"entities"`
	Facts    []extractionFact   `json:"facts"`
}

type extractionEntity struct {
	Name    string `json:"name"`
	Type    string `json:"type"` // one of the entity types or Other: the enum extractionSchema adds
	Summary string `json:"summary"`
}

type extractionFact struct {
	Source    string  `json:"source"`
	Target    string  `json:"target"`
	Relation  string  `json:"relation" jsonschema:"SCREAMING_SNAKE_CASE, e.g. WORKS_AT"`
	Fact      string  `json:"fact"`
	ValidAt   *string `json:"valid_at" jsonschema:"ISO 8601 date or date-time, or null"`
	InvalidAt *string `json:"invalid_at" jsonschema:"ISO 8601 date or date-time, or null"`
}

// extractionAttributes are the attributes of an answer's entities and facts, in
// their order: a type with attributes adds them to its branch of the schema
// (extractionSchema), which a Go type cannot say.
type extractionAttributes struct {
	Entities []struct {
		Attributes map[string]any `json:"attributes"`
	} `json:"entities"`
	Facts []struct {
		Attributes map[string]any `json:"attributes"`
	} `json:"facts"`
}

// extractionSchema is the JSON schema of the structured output: strict, so every field
// is present (null where unknown), an entity's type one of the ontology's entity types
// or Other. Each entity type with attributes has a branch of its own (anyOf): its
// name as the type, and "attributes", an object of its attributes, each typed (an enum
// its values, a date a string) and null when the episode does not say; the other
// types and Other share the plain branch. So does each edge type with attributes,
// with its name as the relation; any other relation is the plain branch's. Without
// attributes the schema is the plain one.
func extractionSchema(ont graph.Ontology) json.RawMessage {
	return answerSchema[extraction](func(s *jsonschema.Schema) {
		entity := s.Properties["entities"].Items
		plain := []any{}
		var typed []*jsonschema.Schema
		for _, t := range ont.EntityTypes {
			if len(t.Attributes) == 0 {
				plain = append(plain, t.Name)
				continue
			}
			b := entity.CloneSchemas()
			b.Properties["type"] = &jsonschema.Schema{Type: "string", Enum: []any{t.Name}}
			b.Properties["attributes"] = attributesSchema(t.Attributes, entity.AdditionalProperties)
			b.Required = append(slices.Clone(b.Required), "attributes")
			typed = append(typed, b)
		}
		entity.Properties["type"].Enum = append(plain, "Other")
		if len(typed) > 0 {
			s.Properties["entities"].Items = &jsonschema.Schema{AnyOf: append(typed, entity)}
		}
		fact := s.Properties["facts"].Items
		typed = nil
		for _, t := range ont.EdgeTypes {
			if len(t.Attributes) == 0 {
				continue
			}
			b := fact.CloneSchemas()
			b.Properties["relation"] = &jsonschema.Schema{Type: "string", Enum: []any{t.Name}, Description: edgeTypeLine(t)}
			b.Properties["attributes"] = attributesSchema(t.Attributes, fact.AdditionalProperties)
			b.Required = append(slices.Clone(b.Required), "attributes")
			typed = append(typed, b)
		}
		if len(typed) > 0 {
			s.Properties["facts"].Items = &jsonschema.Schema{AnyOf: append(typed, fact)}
		}
	})
}

// attributesSchema is the object of a type's attributes: every one required (strict
// mode), null allowed, nothing else.
func attributesSchema(attrs []graph.Attribute, none *jsonschema.Schema) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: none}
	for _, a := range attrs {
		p := &jsonschema.Schema{Description: a.Description}
		switch a.Type {
		case graph.AttrNumber:
			p.Types = []string{"number", "null"}
		case graph.AttrBoolean:
			p.Types = []string{"boolean", "null"}
		case graph.AttrDate:
			p.Types = []string{"string", "null"}
			p.Description = strings.TrimSpace(a.Description + " (a date, YYYY-MM-DD)")
		case graph.AttrEnum:
			p.Types = []string{"string", "null"}
			for _, v := range a.Values {
				p.Enum = append(p.Enum, v)
			}
			p.Enum = append(p.Enum, nil)
		default:
			p.Types = []string{"string", "null"}
		}
		s.Properties[a.Name] = p
		s.Required = append(s.Required, a.Name)
	}
	return s
}

// edgeTypeLine describes an edge type: its ends and description.
func edgeTypeLine(t graph.EdgeType) string {
	ends := func(types []string) string {
		if len(types) == 0 {
			return "any"
		}
		return strings.Join(types, " or ")
	}
	line := fmt.Sprintf("from %s to %s", ends(t.SourceTypes), ends(t.TargetTypes))
	if t.Description != "" {
		line += ": " + t.Description
	}
	return line
}

// attributeLine describes an entity or edge type's attributes for the prompt.
func attributeLine(attrs []graph.Attribute) string {
	parts := make([]string, len(attrs))
	for i, a := range attrs {
		typ := a.Type
		if a.Type == graph.AttrEnum {
			typ = "one of " + strings.Join(a.Values, ", ")
		}
		parts[i] = a.Name + " (" + typ + ")"
		if a.Description != "" {
			parts[i] = a.Name + " (" + typ + "; " + a.Description + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// ontologyInstructions is what the instructions add when the ontology has
// attributes or edge types.
const ontologyInstructions = `

Some entity types have attributes (listed with the type): an entity of such a type also has "attributes", an object with each of its type's attributes, set to the value the episode states (a number as a number, a yes/no as true or false, a date as YYYY-MM-DD, one of the listed values) and null for what it does not state. Never guess an attribute.
The edge types listed are relations of the domain: when a fact is one of them, use its name as the relation, only between entities of the types it names, and give its attributes the same way.`

// MaxExtractionInstructions bounds a memory's extraction_instructions.
const MaxExtractionInstructions = graph.MaxExtractionInstructions

type ontologyKey struct{}

// WithOntology gives the extractions made with ctx the ontology of the episode's
// space (the deployment's, or fewer types its owner chose) instead of the
// deployment's.
func WithOntology(ctx context.Context, ont graph.Ontology) context.Context {
	return context.WithValue(ctx, ontologyKey{}, ont)
}

// ontologyOf is the ontology WithOntology gave ctx, if any.
func ontologyOf(ctx context.Context) (graph.Ontology, bool) {
	ont, ok := ctx.Value(ontologyKey{}).(graph.Ontology)
	return ont, ok
}

const extractionInstructions = `You read one episode of an AI agent's memory (the text inside <current_episode>) and list what it says about the world, as one JSON object with two lists.

"entities": every person, organisation, place, event, product, pet or idea the episode names, each once:
  "name": its name as written, the fullest form used (a person's full name, not "he" or "I"),
  "type": one of the entity types listed, or "Other",
  "summary": one sentence of what the episode says about it.
The speaker of a message is an entity too: in "Dana Reyes (user): I moved to Porto" the speaker is Dana Reyes and "I" means Dana Reyes. When the speaker gives no name, use the name of the role ("User").
Never list greetings, pronouns, dates, roles of the chat or words like "news" or "correction" as entities.

"facts": relations between two entities of your list:
  "source" and "target": the exact names from your entities list,
  "relation": the relation in SCREAMING_SNAKE_CASE (WORKS_AT, LIVES_IN, REPORTS_TO, SIBLING_OF, HAS_PET, LIKES, ...),
  "fact": a short sentence stating it,
  "valid_at": when it started holding, ISO 8601 ("2025-06-01"), or null,
  "invalid_at": when it stopped holding, or null.
Resolve relative dates ("last month", "since 2022", "as of June 2025") against the reference time. A fact the episode says has ended (left a job, moved away, a correction of something said earlier) gets invalid_at.

Example. Reference time 2025-07-10. Episode: "Dana Reyes (user): Big news: as of June I work at Globex. I left Initech."
{"entities": [{"name": "Dana Reyes", "type": "Person", "summary": "The user; works at Globex."}, {"name": "Globex", "type": "Organization", "summary": "Dana's employer since June 2025."}, {"name": "Initech", "type": "Organization", "summary": "Dana's former employer."}],
 "facts": [{"source": "Dana Reyes", "target": "Globex", "relation": "WORKS_AT", "fact": "Dana Reyes works at Globex.", "valid_at": "2025-06-01", "invalid_at": null}, {"source": "Dana Reyes", "target": "Initech", "relation": "WORKS_AT", "fact": "Dana Reyes worked at Initech.", "valid_at": null, "invalid_at": "2025-07-10"}]}

Use the earlier episodes only to understand this one (who "I" or "she" is); do not repeat their facts unless this episode restates them. Answer with the JSON object only.`

// Extract makes one structured-output call for the episode.
func (o *OpenAI) Extract(ctx context.Context, ep *graph.Episode, previous []*graph.Episode) (*graph.Extracted, error) {
	ont, schema := o.ontology, o.schema
	if narrowed, ok := ontologyOf(ctx); ok {
		ont, schema = narrowed, extractionSchema(narrowed)
	}
	system, attributes := extractionInstructions, 0
	var types strings.Builder
	for _, t := range ont.EntityTypes {
		fmt.Fprintf(&types, "- %s: %s\n", t.Name, t.Description)
		if len(t.Attributes) > 0 {
			fmt.Fprintf(&types, "  attributes: %s\n", attributeLine(t.Attributes))
		}
		attributes += len(t.Attributes)
	}
	if len(ont.EdgeTypes) > 0 {
		types.WriteString("\nEdge types:\n")
		for _, t := range ont.EdgeTypes {
			fmt.Fprintf(&types, "- %s: %s\n", t.Name, edgeTypeLine(t))
			if len(t.Attributes) > 0 {
				fmt.Fprintf(&types, "  attributes: %s\n", attributeLine(t.Attributes))
			}
			attributes += len(t.Attributes)
		}
	}
	if attributes > 0 || len(ont.EdgeTypes) > 0 {
		system += ontologyInstructions
	}
	instructions := ""
	if ep.ExtractionInstructions != "" {
		instructions = "Instructions for this episode from whoever wrote it (they add to the above, never change the JSON asked for):\n" +
			ep.ExtractionInstructions + "\n\n"
	}
	var earlier strings.Builder
	for i := len(previous) - 1; i >= 0; i-- {
		fmt.Fprintf(&earlier, "<episode reference_time=%q>\n%s\n</episode>\n", previous[i].ValidAt.Format(time.RFC3339),
			graph.AnnotateTimes(previous[i].Content, previous[i].ValidAt))
	}
	// Relative times come resolved ("yesterday (7 May 2023)"): a small model reads the
	// date instead of working it out.
	user := fmt.Sprintf("Entity types:\n%s\nEarlier episodes:\n%s\n%sReference time: %s\n\n<current_episode>\n%s\n</current_episode>",
		types.String(), earlier.String(), instructions, ep.ValidAt.Format(time.RFC3339), graph.AnnotateTimes(ep.Content, ep.ValidAt))
	var out *graph.Extracted
	// An attribute's name and value cost some 12 tokens each time an entity lists it.
	err := o.structured(ctx, system, user, "extraction", schema, extractionBudget(ep.Content)+12*attributes,
		func(content string) (err error) {
			out, err = parseExtraction(content)
			return err
		})
	return out, err
}

// extractionBudget is the output, in tokens, an extraction of an episode of content
// may need; structured holds it under llm.max_tokens. Only the current episode counts:
// the earlier ones in the prompt are read, never answered. It is sized on the answers
// the tests' fixtures script (what a model gives for such sentences). An entity costs
// about 30 tokens of JSON, a fact about 55 (its keys, the restated sentence, two
// dates), a few more when the model indents. The densest fixture sentence, "In March
// 2024 Alice left Acme and joined Globex." (48 bytes: three entities, two facts),
// needs about 240: the first 256 tokens cover one such sentence, the speaker
// included. Beyond it, a sentence of a conversation (about 80 bytes) adds at most two
// entities and two facts, some 170 tokens, about 2 a byte; the eval corpus's
// episodes average 318 bytes with about 2.4 labelled entities and 2.4 facts, so a
// model listing twice that needs some 400 tokens, 1.3 a byte. Three tokens a byte
// leave room over both (1,210 tokens for that average episode, the cap of 2,048 from
// about 600 bytes on), and byte-level tokenizers spend more tokens on a character
// outside ASCII, which takes more bytes too. Notes made only of names ("Erin owns
// Fido. Frank likes jazz.") can need more and are cut off; a runaway of a short
// episode costs a few hundred tokens instead of llm.max_tokens.
func extractionBudget(content string) int {
	return 256 + 3*len(content)
}

// structured makes one chat completion asking for JSON of schema, in the current
// structured-output mode (at most maxTokens of output when it is below llm.max_tokens),
// and hands the answer to parse, retrying (see retry) until
// parse accepts it. A retry after an answer that could not be read is never the same
// request: it shows the model its answer and what was wrong with it. In auto mode, a
// server that refuses the mode moves every later call to the next one (fallBack).
// The answer is streamed and read only as far as it can matter (see reading); a call
// ended early, or stopped by max_tokens, is counted as cut_off once, whether its
// answer is read (its JSON had ended) or retried.
func (o *OpenAI) structured(ctx context.Context, system, user, name string, schema json.RawMessage, maxTokens int,
	parse func(string) error) error {
	for {
		mode := o.outputMode()
		first := o.chatRequest(mode, system, user, name, schema, maxTokens)
		req := first
		err := o.retry(ctx, "chat", func(ctx context.Context) error {
			if span := trace.SpanFromContext(ctx); span.IsRecording() {
				span.SetAttributes(attribute.String("memgate.llm.task", name), attribute.String("memgate.llm.structured_output", mode),
					//lint:ignore SA1019 max_tokens is what memgate sends (chatRequest says why)
					attribute.Int("gen_ai.request.max_tokens", req.MaxTokens))
			}
			got, err := o.stream(ctx, req, mode)
			if err != nil {
				if refusesMode(err, mode) {
					return errUnsupported{mode, err}
				}
				return err
			}
			answer, err := got.answer()
			if err == nil && got.ranOn() {
				o.opts.Metrics.LLMError("cut_off") // read all the same: what followed its end cannot matter
			}
			if err == nil {
				err = parse(answer)
			}
			var bad errMalformed
			if errors.As(err, &bad) {
				req = repair(first, answer, bad)
			}
			return err
		})
		var refused errUnsupported
		if errors.As(err, &refused) && o.fallBack(mode, refused.err) {
			continue
		}
		return err
	}
}

func (o *OpenAI) outputMode() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mode
}

// fallBack moves auto mode from a mode the server refused to the next one, for every
// later call of the process; of workers refused at once, the first moves it and logs.
// It reports whether the call should be made again.
func (o *OpenAI) fallBack(refused string, err error) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.auto {
		return false
	}
	if o.mode != refused {
		return true // another call moved on already
	}
	i := slices.Index(OutputModes, refused)
	if i+1 >= len(OutputModes) {
		return false
	}
	o.mode = OutputModes[i+1]
	o.opts.Log.Warn("the model server refuses structured output "+refused+"; using "+o.mode+" from now on",
		"structured_output", o.mode, "error", err.Error())
	return true
}

// chatRequest asks for JSON of schema in mode, in at most maxTokens of output when
// that is below llm.max_tokens. Outside json_schema the schema is also written into
// the instructions: a server that constrains decoding to it does not show it to the
// model, and one that does not constrain relies on it.
func (o *OpenAI) chatRequest(mode, system, user, name string, schema json.RawMessage, maxTokens int) openai.ChatCompletionRequest {
	if mode != OutputJSONSchema {
		system += "\n\nThe JSON object must follow this JSON schema:\n" + string(schema)
	}
	if maxTokens <= 0 || maxTokens > o.opts.MaxTokens {
		maxTokens = o.opts.MaxTokens
	}
	req := openai.ChatCompletionRequest{
		Model:       o.opts.Model,
		Temperature: 0,
		//lint:ignore SA1019 max_tokens is what OpenAI-compatible servers (llama.cpp, vLLM, Ollama) read; max_completion_tokens is OpenAI's alone
		MaxTokens: maxTokens,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: user},
		},
	}
	switch mode {
	case OutputJSONSchema:
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: name, Schema: schema, Strict: true}}
	case OutputJSONObject: // compatible moves the schema to where llama-cpp-python reads it
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: name, Schema: schema}}
	case OutputTools:
		req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: name, Description: "Give the answer.", Parameters: schema}}}
		req.ToolChoice = openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: name}}
	}
	return req
}

// stream makes the chat call with the answer streamed, and reads it until it ends or
// until reading on cannot matter (see reading). Closing the stream early closes the
// connection, and a server that sees its client go stops generating (llama.cpp's and
// llama-cpp-python's do). A server refusing the request (a structured-output mode, say)
// answers before the stream starts, so the error is CreateChatCompletionStream's.
// Tokens are counted from the usage the server sends last (stream_options
// include_usage); when there is none (a stream closed early never gets it, and some
// servers never send it) they are estimated: the messages and what was read of the
// answer counted (count), and the memory's cost marked Estimated.
func (o *OpenAI) stream(ctx context.Context, req openai.ChatCompletionRequest, mode string) (*streamed, error) {
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	//lint:ignore SA1019 max_tokens is what memgate sends (chatRequest says why)
	ctx, clock, stop := watch(ctx, o.opts.Timeout, req.MaxTokens)
	defer stop()
	s, err := o.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return nil, outran(ctx, err)
	}
	defer s.Close()
	got := &streamed{}
	var usage *openai.Usage
	model, estimated := "", false
	defer func() {
		if usage == nil {
			estimated = true
			prompt := 0
			for _, m := range req.Messages {
				prompt += o.count(m.Content) + messageTokens
			}
			usage = &openai.Usage{PromptTokens: prompt, CompletionTokens: o.count(got.text().b.String())}
		}
		meterOf(ctx).add(graph.Cost{PromptTokens: int64(usage.PromptTokens), CompletionTokens: int64(usage.CompletionTokens), Estimated: estimated})
		o.opts.Metrics.ChatPromptTokens.Add(int64(usage.PromptTokens))
		o.opts.Metrics.ChatOutputTokens.Add(int64(usage.CompletionTokens))
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", usage.PromptTokens),
				attribute.Int("gen_ai.usage.output_tokens", usage.CompletionTokens),
				attribute.Bool("memgate.llm.usage_estimated", estimated), attribute.Bool("memgate.llm.cut_short", got.early))
			if model != "" {
				span.SetAttributes(attribute.String("gen_ai.response.model", model))
			}
			if got.finish != "" {
				span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{string(got.finish)}))
			}
		}
	}()
	for !got.early {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return nil, outran(ctx, err)
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		if chunk.Model != "" {
			model = chunk.Model
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			if c.FinishReason != "" {
				got.finish = c.FinishReason
			}
			if c.Delta.Content != "" {
				got.content.add(c.Delta.Content)
				clock.token()
			}
			for _, call := range c.Delta.ToolCalls {
				if mode != OutputTools {
					continue
				}
				if call.Index != nil && *call.Index != 0 { // a second call: the model going on after its answer
					got.args.stop = got.args.stop || got.args.complete()
					continue
				}
				got.tool = true
				got.args.add(call.Function.Arguments)
				clock.token()
			}
			got.early = got.text().stop
		}
	}
	return got, nil
}

// streamed is a chat answer as far as it was read: its content, and in tools mode
// the arguments of the forced call, which are the answer once the call has begun.
type streamed struct {
	content, args reading
	tool          bool                // a tool call began
	finish        openai.FinishReason // the server's, "" when the stream was closed early
	early         bool                // closed by the client before it ended
}

func (s *streamed) text() *reading {
	if s.tool {
		return &s.args
	}
	return &s.content
}

// ranOn reports whether the model went on past what it needed: the stream was closed
// early, or max_tokens stopped it.
func (s *streamed) ranOn() bool {
	return s.early || s.finish == openai.FinishReasonLength
}

// answer is the JSON text of the answer: its first top-level object when that ended,
// whatever followed; otherwise the text from its first { to its last } (a server asked
// in words may wrap it in prose or a code fence). An answer cut off before its object
// ended, by max_tokens or by a run of whitespace, is malformed, never read in part.
func (s *streamed) answer() (string, error) {
	r := s.text()
	text := r.b.String()
	switch {
	case r.complete():
		return text[r.start:r.end], nil
	case s.early:
		return text, errPadded
	case s.finish == openai.FinishReasonLength:
		return text, errCutOff
	}
	if i, j := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && j > i {
		text = text[i : j+1]
	}
	return text, nil
}

// maxRun is the longest run of whitespace a JSON answer may hold before reading stops.
// A model indenting its JSON writes a newline and a few spaces a level, and the
// extraction's schema nests three levels deep (an object in a list in the answer);
// llama.cpp's grammars from a JSON schema allow at most two newlines and 20 spaces
// between two tokens. A run of 32 is none of these: it is a model padding with
// newlines, which a JSON grammar without that bound (llama-cpp-python's json_object)
// lets it do until max_tokens.
const maxRun = 32

// reading follows a JSON answer as it streams in, and says when reading on cannot
// matter (stop): once the answer's first top-level object has ended and anything but
// whitespace or the end of a code fence follows it (a model going on past its answer,
// a second object, more words), or more than maxRun bytes of those; or at a run of
// maxRun whitespace bytes anywhere. Braces are counted outside strings, escapes
// respected; text before the first { is skipped (a server asked in words may write
// some).
type reading struct {
	b          strings.Builder
	start, end int // the first object's bytes: start from its {, end past its }, 0 until it ends
	depth      int
	opened     bool
	inString   bool
	escaped    bool
	run        int // whitespace bytes in a row
	stop       bool
}

func (r *reading) complete() bool { return r.end > 0 }

func (r *reading) add(s string) {
	for i := 0; i < len(s) && !r.stop; i++ {
		c, at := s[i], r.b.Len()+i
		space := c == ' ' || c == '\n' || c == '\r' || c == '\t'
		if space {
			r.run++
		} else {
			r.run = 0
		}
		switch {
		case r.complete():
			r.stop = !space && c != '`' || at-r.end >= maxRun
		case !r.opened:
			if c == '{' {
				r.opened, r.start, r.depth = true, at, 1
			}
		case r.escaped:
			r.escaped = false
		case r.inString:
			r.escaped, r.inString = c == '\\', c != '"'
		case c == '"':
			r.inString = true
		case c == '{':
			r.depth++
		case c == '}':
			if r.depth--; r.depth == 0 {
				r.end = at + 1
			}
		}
		r.stop = r.stop || r.run >= maxRun
	}
	r.b.WriteString(s)
}

// repair is the request after an answer that could not be read: the first request,
// the answer (shortened) and what was wrong with it, at a higher temperature, so the
// retry cannot repeat the same output.
func repair(first openai.ChatCompletionRequest, answer string, bad errMalformed) openai.ChatCompletionRequest {
	if r := []rune(answer); len(r) > 1500 {
		answer = string(r[:1500]) + " ..."
	}
	req := first
	req.Messages = append(slices.Clone(first.Messages),
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: answer},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "That answer could not be read (" + bad.why +
			"). Answer again with only the JSON object, complete and short, following the instructions."})
	req.Temperature = 0.4
	return req
}

// errUnsupported is a server refusing the structured-output mode of the request.
type errUnsupported struct {
	mode string
	err  error
}

func (e errUnsupported) Error() string {
	return "structured output " + e.mode + " refused: " + e.err.Error()
}
func (e errUnsupported) Unwrap() error { return e.err }

// refusesMode reports whether err is a server refusing mode itself rather than
// failing: a 400, 404, 415, 422, 500 or 501 whose message names what was asked for
// (llama-cpp-python answers json_schema with a 500 validation error naming
// response_format).
func refusesMode(err error, mode string) bool {
	var api *openai.APIError
	var req *openai.RequestError
	status, text := 0, strings.ToLower(err.Error())
	switch {
	case errors.As(err, &api):
		status = api.HTTPStatusCode
	case errors.As(err, &req):
		status = req.HTTPStatusCode
	default:
		return false
	}
	switch status {
	case 400, 404, 415, 422, 500, 501:
	default:
		return false
	}
	words := map[string][]string{
		OutputJSONSchema: {"response_format", "json_schema"},
		OutputJSONObject: {"response_format", "json_object"},
		OutputTools:      {"tool", "function"},
	}[mode]
	for _, w := range words {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// errMalformed is output that does not parse: retried like a server error.
type errMalformed struct{ why string }

// errCutOff is an answer that reached llm.max_tokens before it ended, most often a
// model repeating itself: counted apart (kind cut_off), retried like malformed output.
var errCutOff = errMalformed{"cut off at llm.max_tokens before it ended"}

// errPadded is an answer that ran into a run of whitespace before it ended, read no
// further: a model padding with newlines, a runaway like errCutOff and counted with it.
var errPadded = errMalformed{"cut off at a run of whitespace before it ended"}

func (e errMalformed) Error() string { return "malformed LLM output: " + e.why }

func parseExtraction(content string) (*graph.Extracted, error) {
	content = strings.TrimSpace(content)
	if content == "" {
		return nil, errMalformed{"empty"}
	}
	var raw extraction
	if err := json.Unmarshal([]byte(content), &raw); err != nil {
		return nil, errMalformed{"not the extraction JSON"}
	}
	var attrs extractionAttributes
	_ = json.Unmarshal([]byte(content), &attrs) // read above: only an attributes value of another shape fails, and gives none
	out := &graph.Extracted{}
	for i, e := range raw.Entities {
		x := graph.ExtractedEntity{Name: e.Name, Type: e.Type, Summary: e.Summary}
		if i < len(attrs.Entities) {
			x.Attributes = attrs.Entities[i].Attributes
		}
		out.Entities = append(out.Entities, x)
	}
	for i, f := range raw.Facts {
		x := graph.ExtractedFact{Source: f.Source, Target: f.Target, Relation: f.Relation,
			Fact: f.Fact, ValidAt: parseDate(f.ValidAt), InvalidAt: parseDate(f.InvalidAt)}
		if i < len(attrs.Facts) {
			x.Attributes = attrs.Facts[i].Attributes
		}
		out.Facts = append(out.Facts, x)
	}
	return out, nil
}

// parseDate reads the date forms models write; anything else is unknown (nil).
func parseDate(s *string) *time.Time {
	if s == nil {
		return nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02", "2006-01", "2006"} {
		if t, err := time.Parse(layout, strings.TrimSpace(*s)); err == nil {
			t = t.UTC()
			return &t
		}
	}
	return nil
}

// messageTokens is what a chat message costs beyond its content (its role and the
// markers around it), as OpenAI's chat format counts it.
const messageTokens = 4

// count is the tokens of text for a call whose answer reported none (CountTokens).
func (o *OpenAI) count(text string) int {
	if o.opts.CountTokens != nil {
		return o.opts.CountTokens(text)
	}
	return (len(text) + 3) / 4
}

// Embed embeds texts to store and compare in one call, each after DocumentPrefix.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return o.embed(ctx, o.opts.DocumentPrefix, texts)
}

// EmbedQuery embeds a search query, after QueryPrefix.
func (o *OpenAI) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := o.embed(ctx, o.opts.QueryPrefix, []string{text})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// embed embeds texts, each after prefix, in one call.
func (o *OpenAI) embed(ctx context.Context, prefix string, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	if prefix != "" {
		prefixed := make([]string, len(texts))
		for i, t := range texts {
			prefixed[i] = prefix + t
		}
		texts = prefixed
	}
	var out [][]float32
	err := o.retry(ctx, "embeddings", func(ctx context.Context) error {
		if o.opts.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, o.opts.Timeout)
			defer cancel()
		}
		meterOf(ctx).add(graph.Cost{EmbeddingInputs: int64(len(texts))}) // sent, whatever the answer
		resp, err := o.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
			Input: texts, Model: openai.EmbeddingModel(o.opts.Model), Dimensions: o.opts.Dimensions})
		if err != nil {
			return err
		}
		tokens, estimated := resp.Usage.PromptTokens, false
		if tokens == 0 { // the server reported none
			for _, t := range texts {
				tokens += o.count(t)
			}
			estimated = true
		}
		o.opts.Metrics.EmbeddingTokens.Add(int64(tokens))
		meterOf(ctx).add(graph.Cost{EmbeddingTokens: int64(tokens), Estimated: estimated})
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", tokens), attribute.Bool("memgate.llm.usage_estimated", estimated),
				attribute.Int("memgate.embedding.inputs", len(texts)), attribute.Int("gen_ai.embeddings.dimension.count", o.opts.Dimensions))
		}
		if len(resp.Data) != len(texts) {
			return errMalformed{fmt.Sprintf("%d embeddings for %d texts", len(resp.Data), len(texts))}
		}
		out = make([][]float32, len(texts))
		for _, d := range resp.Data {
			if d.Index < 0 || d.Index >= len(texts) || len(d.Embedding) != o.opts.Dimensions {
				return errMalformed{"embedding of the wrong index or dimension"}
			}
			out[d.Index] = d.Embedding
		}
		return nil
	})
	return out, err
}

// retry runs call with a concurrency slot, retrying what may pass on a second try.
func (o *OpenAI) retry(ctx context.Context, what string, call func(context.Context) error) error {
	var err error
	for attempt := 0; attempt <= o.opts.MaxRetries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(backoff(o.opts.RetryBase, attempt, time.Minute)):
			}
		}
		select {
		case o.slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		if what == "chat" {
			o.opts.Metrics.ChatCalls.Add(1)
			meterOf(ctx).add(graph.Cost{ChatCalls: 1})
		} else {
			o.opts.Metrics.EmbeddingCalls.Add(1)
			meterOf(ctx).add(graph.Cost{EmbeddingCalls: 1})
		}
		callCtx, span := o.startCall(ctx, what, attempt)
		err = call(callCtx)
		endCall(span, err)
		<-o.slots
		if err == nil {
			return nil
		}
		kind, retryable := classifyLLMError(err)
		o.opts.Metrics.LLMError(kind)
		if !retryable || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	kind, _ := classifyLLMError(err)
	return &LLMError{Kind: kind, Op: what, Err: err}
}

// LLMError is a call to the model provider that failed for good. Kind is
// classifyLLMError's name for it (malformed, cut_off, timeout, network, rate_limited, server,
// http_NNN): stable, for readers of the memory; Err has the provider's own text, for
// the log only.
type LLMError struct {
	Kind, Op string
	Err      error
}

func (e *LLMError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *LLMError) Unwrap() error { return e.Err }

// classifyLLMError names an error's kind and says whether a retry may help.
func classifyLLMError(err error) (string, bool) {
	var api *openai.APIError
	var req *openai.RequestError
	var malformed errMalformed
	var unsupported errUnsupported
	var netErr net.Error
	status := 0
	switch {
	case errors.As(err, &unsupported):
		return "unsupported_format", false
	case errors.As(err, &malformed) && (malformed == errCutOff || malformed == errPadded):
		return "cut_off", true
	case errors.As(err, &malformed):
		return "malformed", true
	case errors.As(err, &api):
		status = api.HTTPStatusCode
	case errors.As(err, &req):
		status = req.HTTPStatusCode
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout", true
	case errors.Is(err, context.Canceled):
		return "canceled", false
	default:
		return "network", true
	}
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limited", true
	case status >= 500:
		return "server", true
	case status == http.StatusRequestTimeout:
		return "timeout", true
	}
	return fmt.Sprintf("http_%d", status), false
}

// answerPairs asks, in one call, one yes-or-no question per numbered pair, and returns
// the answers in order. The answer is an object of one boolean per pair, named pair_1,
// pair_2 and on, every one required and no other allowed: its schema holds the number
// of pairs, so a server that constrains its output to the schema cannot answer for
// more or fewer pairs than it was asked about.
func answerPairs(ctx context.Context, o *OpenAI, instructions, name string, pairs []string) ([]bool, error) {
	var b strings.Builder
	properties := map[string]*jsonschema.Schema{}
	required := make([]string, len(pairs))
	for i, p := range pairs {
		fmt.Fprintf(&b, "%d. %s\n", i+1, p)
		required[i] = pairKey(i)
		properties[required[i]] = &jsonschema.Schema{Type: "boolean"}
	}
	schema, err := json.Marshal(&jsonschema.Schema{Type: "object", Properties: properties, Required: required, PropertyOrder: required,
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}})
	if err != nil {
		return nil, err
	}
	answers := make([]bool, len(pairs))
	err = o.structured(ctx, instructions+"\n"+pairsAnswerFormat, "<pairs>\n"+b.String()+"</pairs>", name, schema, 0, func(content string) error {
		var out map[string]bool
		if json.Unmarshal([]byte(content), &out) != nil || len(out) != len(pairs) {
			return errMalformed{"not one answer per pair"}
		}
		for i := range pairs {
			v, ok := out[pairKey(i)]
			if !ok {
				return errMalformed{"not one answer per pair"}
			}
			answers[i] = v
		}
		return nil
	})
	return answers, err
}

const pairsAnswerFormat = `Answer with JSON only: {"pair_1": true or false, "pair_2": true or false, ...}, one key per numbered pair.`

// pairKey names the answer to the i-th pair (from 0).
func pairKey(i int) string { return fmt.Sprintf("pair_%d", i+1) }

const dedupeInstructions = `You decide whether names in an AI agent's memory refer to the same real-world entity.
For each numbered pair, answer true when both names certainly mean the same entity (a fuller name, a nickname, a spelling variant), false otherwise.`

// SameEntities asks, in one call, which of the ambiguous pairs name the same entity.
func (o *OpenAI) SameEntities(ctx context.Context, pairs []NamePair) ([]bool, error) {
	lines := make([]string, len(pairs))
	for i, p := range pairs {
		lines[i] = fmt.Sprintf("%q / %q\n   new: %s\n   known: %s", p.Extracted, p.Existing, p.ExtractedSummary, p.ExistingSummary)
	}
	return answerPairs(ctx, o, dedupeInstructions, "same_entities", lines)
}

const contradictionInstructions = `You keep an AI agent's memory of facts consistent over time.
For each numbered pair, answer true when the new fact and the known fact cannot both hold at the same time (the new one replaces, ends or denies the known one: a new employer, a new home, a broken engagement), false when both can be true together (an extra hobby, a second friend, more detail).`

// Contradicts asks, in one call, which known facts the new facts contradict.
func (o *OpenAI) Contradicts(ctx context.Context, pairs []FactPair) ([]bool, error) {
	lines := make([]string, len(pairs))
	for i, p := range pairs {
		lines[i] = fmt.Sprintf("new: %s (%s, from %s)\n   known: %s (%s, from %s)",
			p.New.Fact, p.New.Name, since(p.New.ValidAt), p.Stored.Fact, p.Stored.Name, since(p.Stored.ValidAt))
	}
	return answerPairs(ctx, o, contradictionInstructions, "contradictions", lines)
}

func since(t *time.Time) string {
	if t == nil {
		return "unknown"
	}
	return t.Format("2006-01-02")
}
