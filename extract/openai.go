package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

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
	Metrics        *Metrics
	Log            *slog.Logger
}

// OpenAI is the LLM extractor and embedder through go-openai.
type OpenAI struct {
	opts   OpenAIOptions
	client *openai.Client
	slots  chan struct{}
	types  []EntityType
	schema json.RawMessage
}

// NewOpenAI builds the client; types are the entity types the extractor may assign.
func NewOpenAI(opts OpenAIOptions, types []EntityType) *OpenAI {
	cfg := openai.DefaultConfig(opts.APIKey)
	if opts.BaseURL != "" {
		cfg.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	}
	cfg.HTTPClient = &http.Client{Timeout: opts.Timeout}
	if opts.RetryBase == 0 {
		opts.RetryBase = 500 * time.Millisecond
	}
	return &OpenAI{opts: opts, client: openai.NewClientWithConfig(cfg), slots: make(chan struct{}, max(opts.MaxConcurrency, 1)),
		types: types, schema: extractionSchema(types)}
}

// extractionSchema is the JSON schema of the structured output: strict, so every field
// is present (null where unknown).
func extractionSchema(types []EntityType) json.RawMessage {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name
	}
	nullableDate := map[string]any{"type": []string{"string", "null"}, "description": "ISO 8601 date or date-time, or null"}
	schema := map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"entities", "facts"},
		"properties": map[string]any{
			"entities": map[string]any{"type": "array", "items": map[string]any{
				"type": "object", "additionalProperties": false, "required": []string{"name", "type", "summary"},
				"properties": map[string]any{
					"name":    map[string]any{"type": "string"},
					"type":    map[string]any{"type": "string", "enum": append(names, "Other")},
					"summary": map[string]any{"type": "string"},
				}}},
			"facts": map[string]any{"type": "array", "items": map[string]any{
				"type": "object", "additionalProperties": false,
				"required": []string{"source", "target", "relation", "fact", "valid_at", "invalid_at"},
				"properties": map[string]any{
					"source":     map[string]any{"type": "string"},
					"target":     map[string]any{"type": "string"},
					"relation":   map[string]any{"type": "string", "description": "SCREAMING_SNAKE_CASE, e.g. WORKS_AT"},
					"fact":       map[string]any{"type": "string"},
					"valid_at":   nullableDate,
					"invalid_at": nullableDate,
				}}},
		},
	}
	b, _ := json.Marshal(schema)
	return b
}

const extractionInstructions = `You read one episode of an AI agent's memory and list what it says about the world.
Entities: the people, organisations, places, events, products and ideas it names, each once, with its type and a one-sentence summary of what the episode says about it.
Facts: relations between two of those entities, each with a relation in SCREAMING_SNAKE_CASE, a short sentence stating it, and when it started (valid_at) and stopped (invalid_at) holding in the world, as ISO 8601, or null when the episode does not say. Resolve relative dates against the reference time.
A fact that the episode says has ended gets invalid_at. Use only the earlier episodes to understand this one; do not repeat their facts unless this episode restates them. Answer with JSON only.`

// Extract makes one structured-output call for the episode.
func (o *OpenAI) Extract(ctx context.Context, ep *graph.Episode, previous []*graph.Episode) (*graph.Extracted, error) {
	var types strings.Builder
	for _, t := range o.types {
		fmt.Fprintf(&types, "- %s: %s\n", t.Name, t.Description)
	}
	var earlier strings.Builder
	for i := len(previous) - 1; i >= 0; i-- {
		fmt.Fprintf(&earlier, "<episode reference_time=%q>\n%s\n</episode>\n", previous[i].ValidAt.Format(time.RFC3339), previous[i].Content)
	}
	user := fmt.Sprintf("Entity types:\n%s\nEarlier episodes:\n%s\nReference time: %s\n\n<current_episode>\n%s\n</current_episode>",
		types.String(), earlier.String(), ep.ValidAt.Format(time.RFC3339), ep.Content)
	var out *graph.Extracted
	err := o.structured(ctx, extractionInstructions, user, "extraction", o.schema, func(content string) (err error) {
		out, err = parseExtraction(content)
		return err
	})
	return out, err
}

// structured makes one chat completion with a strict JSON-schema output and hands
// its content to parse, retrying (see retry) until parse accepts it.
func (o *OpenAI) structured(ctx context.Context, system, user, name string, schema json.RawMessage, parse func(string) error) error {
	req := openai.ChatCompletionRequest{
		Model:       o.opts.Model,
		Temperature: 0,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: user},
		},
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: name, Schema: schema, Strict: true},
		},
	}
	return o.retry(ctx, "chat", func(ctx context.Context) error {
		resp, err := o.client.CreateChatCompletion(ctx, req)
		if err != nil {
			return err
		}
		o.opts.Metrics.PromptTokens.Add(int64(resp.Usage.PromptTokens))
		o.opts.Metrics.OutputTokens.Add(int64(resp.Usage.CompletionTokens))
		if len(resp.Choices) == 0 {
			return errMalformed{"no choices"}
		}
		return parse(resp.Choices[0].Message.Content)
	})
}

// errMalformed is output that does not parse: retried like a server error.
type errMalformed struct{ why string }

func (e errMalformed) Error() string { return "malformed LLM output: " + e.why }

func parseExtraction(content string) (*graph.Extracted, error) {
	content = strings.TrimSpace(content)
	if content == "" {
		return nil, errMalformed{"empty"}
	}
	var raw struct {
		Entities []graph.ExtractedEntity `json:"entities"`
		Facts    []struct {
			Source, Target, Relation, Fact string
			ValidAt                        *string `json:"valid_at"`
			InvalidAt                      *string `json:"invalid_at"`
		} `json:"facts"`
	}
	if err := json.Unmarshal([]byte(content), &raw); err != nil {
		return nil, errMalformed{"not the extraction JSON"}
	}
	out := &graph.Extracted{Entities: raw.Entities}
	for _, f := range raw.Facts {
		out.Facts = append(out.Facts, graph.ExtractedFact{Source: f.Source, Target: f.Target, Relation: f.Relation,
			Fact: f.Fact, ValidAt: parseDate(f.ValidAt), InvalidAt: parseDate(f.InvalidAt)})
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

// Embed embeds texts in one call.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	var out [][]float32
	err := o.retry(ctx, "embeddings", func(ctx context.Context) error {
		resp, err := o.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
			Input: texts, Model: openai.EmbeddingModel(o.opts.Model), Dimensions: o.opts.Dimensions})
		if err != nil {
			return err
		}
		o.opts.Metrics.PromptTokens.Add(int64(resp.Usage.PromptTokens))
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
			d := float64(o.opts.RetryBase) * math.Pow(2, float64(attempt-1)) * (0.75 + 0.5*mrand.Float64())
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(d)):
			}
		}
		select {
		case o.slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		o.opts.Metrics.LLMCalls.Add(1)
		err = call(ctx)
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
// classifyLLMError's name for it (malformed, timeout, network, rate_limited, server,
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
	var netErr net.Error
	status := 0
	switch {
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
// the answers in order: the output is {field: [one boolean per pair]}.
func (o *OpenAI) answerPairs(ctx context.Context, instructions, name, field string, pairs []string) ([]bool, error) {
	var b strings.Builder
	for i, p := range pairs {
		fmt.Fprintf(&b, "%d. %s\n", i+1, p)
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "required": []string{field},
		"properties": map[string]any{field: map[string]any{"type": "array", "items": map[string]any{"type": "boolean"}}}})
	var answers []bool
	err := o.structured(ctx, instructions, "<pairs>\n"+b.String()+"</pairs>", name, schema, func(content string) error {
		var out map[string][]bool
		if json.Unmarshal([]byte(content), &out) != nil || len(out[field]) != len(pairs) {
			return errMalformed{"not one answer per pair"}
		}
		answers = out[field]
		return nil
	})
	return answers, err
}

const dedupeInstructions = `You decide whether names in an AI agent's memory refer to the same real-world entity.
For each numbered pair, answer true when both names certainly mean the same entity (a fuller name, a nickname, a spelling variant), false otherwise.
Answer with JSON only: {"same": [...]} with one boolean per pair, in order.`

// SameEntities asks, in one call, which of the ambiguous pairs name the same entity.
func (o *OpenAI) SameEntities(ctx context.Context, pairs []NamePair) ([]bool, error) {
	lines := make([]string, len(pairs))
	for i, p := range pairs {
		lines[i] = fmt.Sprintf("%q / %q\n   new: %s\n   known: %s", p.Extracted, p.Existing, p.ExtractedSummary, p.ExistingSummary)
	}
	return o.answerPairs(ctx, dedupeInstructions, "same_entities", "same", lines)
}

const contradictionInstructions = `You keep an AI agent's memory of facts consistent over time.
For each numbered pair, answer true when the new fact and the known fact cannot both hold at the same time (the new one replaces, ends or denies the known one: a new employer, a new home, a broken engagement), false when both can be true together (an extra hobby, a second friend, more detail).
Answer with JSON only: {"contradicted": [...]} with one boolean per pair, in order.`

// Contradicts asks, in one call, which known facts the new facts contradict.
func (o *OpenAI) Contradicts(ctx context.Context, pairs []FactPair) ([]bool, error) {
	lines := make([]string, len(pairs))
	for i, p := range pairs {
		lines[i] = fmt.Sprintf("new: %s (%s, from %s)\n   known: %s (%s, from %s)",
			p.New.Fact, p.New.Name, since(p.New.ValidAt), p.Stored.Fact, p.Stored.Name, since(p.Stored.ValidAt))
	}
	return o.answerPairs(ctx, contradictionInstructions, "contradictions", "contradicted", lines)
}

func since(t *time.Time) string {
	if t == nil {
		return "unknown"
	}
	return t.Format("2006-01-02")
}
