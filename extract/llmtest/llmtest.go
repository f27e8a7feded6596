// Package llmtest is a scripted OpenAI-compatible server for tests: chat completions
// answer from fixtures keyed by text of the episode, whole or streamed (server-sent
// events, a chunk of a few bytes standing for a token), embeddings are deterministic
// vectors, and faults (429, 500, timeouts, empty and malformed output, answers that
// run on) can be injected. It is the only thing memgate's tests put in place of a real
// service.
package llmtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Fault is what a failing call gets.
type Fault string

const (
	Fault429       Fault = "429"
	Fault500       Fault = "500"
	FaultTimeout   Fault = "timeout"   // answers after Delay + the client's timeout
	FaultEmpty     Fault = "empty"     // a completion with no content
	FaultMalformed Fault = "malformed" // content that is not the JSON asked for
)

// Server is the scripted endpoint. Set fields before use or under Lock.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	fixtures []fixture
	prompts  []string
	failRate float64
	faults   []Fault
	delay    time.Duration
	hang     time.Duration
	tokenGap time.Duration // between the streamed tokens of an answer
	stallAt  int           // a streamed answer stops after this many tokens, until the client goes (0: never)
	accepts  string        // the one structured-output mode served; "" every mode
	runaway  int           // answers still to cut off at max_tokens
	runOn    runOn
	requests []Request
	usage    *usage // fixed usage every call reports; nil: sizes as below
	silent   bool   // no call reports usage
	whole    bool   // every answer one JSON body, streamed or not asked
	failEmb  int    // embedding calls still to fail with a 500
	embReqs  []EmbeddingRequest
	traces   []string // the traceparent header of every call, chat and embeddings

	ChatCalls      atomic.Int64
	EmbeddingCalls atomic.Int64
	// Busy is the time chat calls took in the server, in nanoseconds, less their
	// scripted Latency: what the server itself costs, so a benchmark can show it is
	// not its own bottleneck.
	Busy     atomic.Int64
	Failures atomic.Int64
	n        atomic.Int64
}

type fixture struct {
	key    string
	answer string
}

// runOn scripts answers that go on past what they need, as a small model does.
type runOn struct {
	n     int    // answers still to script
	whole bool   // after the whole answer; else from its middle
	tail  string // repeated, a chunk each, until max_tokens or until the client goes away
}

// pace is how long a runaway answer takes per chunk of its tail: slow enough that a
// client that stops reading is seen to go away long before max_tokens.
const pace = 5 * time.Millisecond

// New starts a server; Close it when done.
func New() *Server {
	s := &Server{hang: 5 * time.Second}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.chat)
	mux.HandleFunc("/v1/embeddings", s.embeddings)
	s.Server = httptest.NewServer(mux)
	return s
}

// URL of the API root, for llm.base_url.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Answer makes chat completions whose current episode contains key answer with v
// (marshalled to JSON). The first matching fixture wins.
func (s *Server) Answer(key string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	s.AnswerRaw(key, string(b))
}

// Knows scripts "who knows whom." as two people and one KNOWS fact, and returns the text.
func (s *Server) Knows(who, whom string) string {
	text := who + " knows " + whom + "."
	s.Answer(text, map[string]any{
		"entities": []map[string]any{{"name": who, "type": "Person", "summary": ""}, {"name": whom, "type": "Person", "summary": ""}},
		"facts": []map[string]any{{"source": who, "target": whom, "relation": "KNOWS", "fact": text,
			"valid_at": nil, "invalid_at": nil}},
	})
	return text
}

// AnswerRaw answers with content as is, for malformed output.
func (s *Server) AnswerRaw(key, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fixtures = append(s.fixtures, fixture{key: key, answer: content})
}

// usage is what ReportUsage makes every call report.
type usage struct{ prompt, completion, perInput int }

// ReportUsage makes every chat call report prompt and completion tokens (in the final
// usage chunk of a streamed answer, when asked for; in the answer's usage otherwise),
// and every embedding call perInput tokens for each text it was sent: numbers a test
// can predict. By default a chat call reports a token per 4 bytes of its prompt's
// current episode and per chunk (or 4 bytes) of its answer, an embedding call one.
func (s *Server) ReportUsage(prompt, completion, perInput int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage = &usage{prompt, completion, perInput}
}

// ReportNoUsage makes no call report usage, streamed or not, chat or embeddings, as
// llama-cpp-python's server streams none.
func (s *Server) ReportNoUsage() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.silent = true
}

// AnswerWhole makes the server answer every chat call with one JSON body, also one
// that asked for a stream, as some OpenAI-compatible servers do.
func (s *Server) AnswerWhole() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.whole = true
}

// FailEmbeddings makes the next n embedding calls fail with a 500, after their input
// was read.
func (s *Server) FailEmbeddings(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failEmb = n
}

// EmbeddingRequest is one embedding call: the texts it sent, the tokens its answer
// reported (none for a failed call), and whether it failed.
type EmbeddingRequest struct {
	Texts  []string
	Inputs int
	Tokens int
	Failed bool
}

// EmbeddingRequests returns the embedding calls so far.
func (s *Server) EmbeddingRequests() []EmbeddingRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]EmbeddingRequest(nil), s.embReqs...)
}

// Request is what one chat call asked for, and for a streamed answer how it went.
type Request struct {
	Mode        string // json_schema, json_object, tools or prompt (no format asked for)
	Schema      bool   // the structured output carried a schema
	MaxTokens   int
	Temperature float64
	Messages    int
	Stream      bool // the answer was asked for as server-sent events
	Chunks      int  // chunks of answer text sent (a token each), when streamed
	// Disconnected: the client went away before the streamed answer's end.
	Disconnected bool
	// Usage: the answer reported PromptTokens and CompletionTokens (a streamed one in
	// its final chunk, which a client that went away first never read).
	Usage                          bool
	PromptTokens, CompletionTokens int
}

// Requests returns the chat calls so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Accepts makes the server serve one structured-output mode, as a real one does:
// json_schema (OpenAI, vLLM, Ollama), json_object with a schema (llama-cpp-python),
// tools (function calling only). A request for another format is refused as such a
// server refuses it; one that asks for no format (prompt) is always answered, with
// the JSON in a fenced block among words.
func (s *Server) Accepts(mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accepts = mode
}

// Runaway makes the next n answers run into max_tokens: cut off, finish_reason length.
func (s *Server) Runaway(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runaway = n
}

// RunawayAfterJSON makes the next n answers go on after their JSON: tail, over and over,
// a chunk each and slowly, until max_tokens stops them (finish_reason length) or the
// client goes away (Request.Disconnected), as a model whose grammar allows whitespace
// after the object pads it with newlines ("\n"), or one that starts over.
func (s *Server) RunawayAfterJSON(n int, tail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runOn = runOn{n: n, whole: true, tail: tail}
}

// PadInside makes the next n answers break off in the middle of their JSON into
// newlines, a chunk each and slowly, until max_tokens stops them (finish_reason
// length) or the client goes away (Request.Disconnected).
func (s *Server) PadInside(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runOn = runOn{n: n, tail: "\n"}
}

// Prompts returns the user messages of the chat calls so far.
func (s *Server) Prompts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.prompts...)
}

// Fail makes a fraction rate of calls (0 to 1, spread evenly) fail with the faults in
// turn.
func (s *Server) Fail(rate float64, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failRate, s.faults = rate, faults
}

// Latency delays every chat completion (embeddings answer at once).
func (s *Server) Latency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Pace streams the tokens of every answer gap apart, as a slow server writes them.
func (s *Server) Pace(gap time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenGap = gap
}

// StallAfter makes every streamed answer stop after n tokens and hold the call open
// until the client goes away, as a server that stops writing does.
func (s *Server) StallAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stallAt = n
}

// HangFor sets how long a timeout fault holds the call.
func (s *Server) HangFor(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = d
}

// fault decides whether this call fails, spreading failures evenly over calls.
func (s *Server) fault() Fault {
	s.mu.Lock()
	rate, faults := s.failRate, s.faults
	s.mu.Unlock()
	n := s.n.Add(1)
	if rate <= 0 || len(faults) == 0 {
		return ""
	}
	if math.Floor(float64(n)*rate) == math.Floor(float64(n-1)*rate) {
		return ""
	}
	s.Failures.Add(1)
	return faults[int(n)%len(faults)]
}

// TraceParents returns the W3C traceparent header of every call so far, chat and
// embeddings, in the order they came ("" for a call without one).
func (s *Server) TraceParents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.traces...)
}

func (s *Server) traced(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.traces = append(s.traces, r.Header.Get("traceparent"))
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.ChatCalls.Add(1)
	began, slept := time.Now(), time.Duration(0)
	defer func() { s.Busy.Add(int64(time.Since(began) - slept)) }()
	s.traced(r)
	var req struct {
		Messages      []struct{ Role, Content string } `json:"messages"`
		MaxTokens     int                              `json:"max_tokens"`
		Temperature   float64                          `json:"temperature"`
		Tools         []json.RawMessage                `json:"tools"`
		Stream        bool                             `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		ResponseFormat *struct {
			Type       string          `json:"type"`
			Schema     json.RawMessage `json:"schema"`
			JSONSchema *struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	asked := Request{Mode: "prompt", MaxTokens: req.MaxTokens, Temperature: req.Temperature, Messages: len(req.Messages),
		Stream: req.Stream}
	switch {
	case req.ResponseFormat != nil && req.ResponseFormat.Type != "" && req.ResponseFormat.Type != "text":
		asked.Mode = req.ResponseFormat.Type
		asked.Schema = len(req.ResponseFormat.Schema) > 0 || (req.ResponseFormat.JSONSchema != nil && len(req.ResponseFormat.JSONSchema.Schema) > 0)
	case len(req.Tools) > 0:
		asked.Mode, asked.Schema = "tools", true
	}
	s.mu.Lock()
	s.requests = append(s.requests, asked)
	record := len(s.requests) - 1
	accepts, cut, on := s.accepts, s.runaway > 0, s.runOn
	if cut {
		s.runaway--
	}
	if !cut && on.n > 0 {
		s.runOn.n--
	} else {
		on = runOn{}
	}
	s.mu.Unlock()
	if accepts != "" && asked.Mode != accepts && asked.Mode != "prompt" {
		refuseFormat(w, accepts, asked.Mode)
		return
	}
	content := `{"entities":[],"facts":[]}`
	prompt := req.Messages[len(req.Messages)-1].Content
	for _, m := range req.Messages { // the task is the first user message; a retry may add turns after it
		if m.Role == "user" {
			prompt = m.Content
			break
		}
	}
	s.mu.Lock()
	s.prompts = append(s.prompts, prompt)
	s.mu.Unlock()
	if i := strings.Index(prompt, "<current_episode>"); i >= 0 {
		prompt = prompt[i:]
	}
	s.mu.Lock()
	for _, f := range s.fixtures {
		if strings.Contains(prompt, f.key) {
			content = f.answer
			break
		}
	}
	hang, delay, fixed, whole, silent := s.hang, s.delay, s.usage, s.whole, s.silent
	s.mu.Unlock()
	asleep := time.Now()
	time.Sleep(delay)
	slept = time.Since(asleep)

	switch s.fault() {
	case Fault429:
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"message":"rate limited","type":"rate_limit_error"}}`, http.StatusTooManyRequests)
		return
	case Fault500:
		http.Error(w, `{"error":{"message":"boom","type":"server_error"}}`, http.StatusInternalServerError)
		return
	case FaultTimeout:
		select {
		case <-r.Context().Done():
		case <-time.After(hang):
		}
		return
	case FaultEmpty:
		content = ""
	case FaultMalformed:
		content = `{"entities": [{"name": "half`
	}
	finish := "stop"
	if cut { // the model repeats itself until max_tokens stops it
		content, finish = strings.Repeat(content[:len(content)/2], 3)[:len(content)], "length"
	}
	if on.n > 0 && !on.whole {
		content = content[:len(content)/2]
	}
	if asked.Mode == "prompt" {
		content = "Sure! Here is what the episode says:\n```json\n" + content + "\n```\nLet me know if you need more."
	}
	limit := req.MaxTokens
	if limit <= 0 {
		limit = 4096
	}
	tokens := pieces(content)
	if req.Stream && !whole {
		report := func(sent int) (int, int) {
			if fixed != nil {
				return fixed.prompt, fixed.completion
			}
			return len(prompt) / 4, sent
		}
		withUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage && !silent
		sent, gone, reported := s.stream(w, r, asked.Mode, tokens, on.tail, limit, finish, withUsage, report)
		s.mu.Lock()
		s.requests[record].Chunks, s.requests[record].Disconnected = sent, gone
		if reported {
			s.requests[record].Usage = true
			s.requests[record].PromptTokens, s.requests[record].CompletionTokens = report(sent)
		}
		s.mu.Unlock()
		return
	}
	if on.n > 0 {
		content += strings.Repeat(on.tail, max(limit-len(tokens), 0))
		finish = "length"
	}
	message := map[string]any{"role": "assistant", "content": content}
	if asked.Mode == "tools" {
		message = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": "call-1", "type": "function", "function": map[string]any{"name": "answer", "arguments": content}}}}
	}
	promptTokens, completionTokens := len(prompt)/4, len(content)/4
	if fixed != nil {
		promptTokens, completionTokens = fixed.prompt, fixed.completion
	}
	answer := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": time.Now().Unix(), "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": message}},
	}
	if !silent {
		answer["usage"] = map[string]any{"prompt_tokens": promptTokens, "completion_tokens": completionTokens,
			"total_tokens": promptTokens + completionTokens}
		s.mu.Lock()
		s.requests[record].Usage = true
		s.requests[record].PromptTokens, s.requests[record].CompletionTokens = promptTokens, completionTokens
		s.mu.Unlock()
	}
	writeJSON(w, answer)
}

// stream sends the answer as server-sent events, as OpenAI's API does: a first chunk
// with the role (and in tools mode the call), a chunk per token of the text (the
// call's arguments in tools mode), then tail over and over, slowly, when the answer
// runs on, until limit chunks; a last chunk with the finish reason, the usage when
// asked for (report's numbers for the chunks sent), and [DONE]. It returns the chunks
// of text sent, whether the client went away before the end, and whether the usage
// chunk was sent.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, mode string, tokens []string, tail string, limit int,
	finish string, usage bool, report func(sent int) (int, int)) (int, bool, bool) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(choices []any, use any) bool {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk",
			"created": time.Now().Unix(), "model": "scripted", "choices": choices, "usage": use})
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	delta := func(text string, first bool) map[string]any {
		if mode != "tools" {
			d := map[string]any{"content": text}
			if first {
				d["role"] = "assistant"
			}
			return d
		}
		call := map[string]any{"index": 0, "function": map[string]any{"arguments": text}}
		if first {
			call = map[string]any{"index": 0, "id": "call-1", "type": "function", "function": map[string]any{"name": "answer", "arguments": text}}
		}
		d := map[string]any{"tool_calls": []any{call}}
		if first {
			d["role"] = "assistant"
		}
		return d
	}
	choice := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}
	}
	if !send(choice(delta("", true), nil), nil) {
		return 0, true, false
	}
	s.mu.Lock()
	gap, stallAt := s.tokenGap, s.stallAt
	s.mu.Unlock()
	sent := 0
	for _, t := range tokens { // whole, whatever max_tokens, as the server answers when not streaming
		if sent == stallAt && stallAt > 0 {
			<-r.Context().Done()
			return sent, true, false
		}
		if gap > 0 {
			select {
			case <-r.Context().Done():
				return sent, true, false
			case <-time.After(gap):
			}
		}
		if !send(choice(delta(t, false), nil), nil) {
			return sent, true, false
		}
		sent++
	}
	for tail != "" && sent < limit {
		select {
		case <-r.Context().Done():
			return sent, true, false
		case <-time.After(pace):
		}
		if !send(choice(delta(tail, false), nil), nil) {
			return sent, true, false
		}
		sent++
		finish = "length"
	}
	if mode == "tools" && finish == "stop" {
		finish = "tool_calls"
	}
	if !send(choice(map[string]any{}, finish), nil) {
		return sent, true, false
	}
	if usage {
		prompt, completion := report(sent)
		if !send([]any{}, map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}) {
			return sent, true, false
		}
	}
	if _, err := fmt.Fprint(w, "data: [DONE]\n\n"); err != nil {
		return sent, true, usage
	}
	return sent, false, usage
}

// pieces cuts text into tokens of about four bytes, between characters; a long text
// into 256 longer pieces, which keeps tests that stream long answers fast.
func pieces(text string) []string {
	size := max(4, len(text)/256)
	var out []string
	for text != "" {
		n := min(size, len(text))
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// refuseFormat answers a request for a structured output the server does not serve,
// as servers of that kind do.
func refuseFormat(w http.ResponseWriter, accepts, asked string) {
	switch accepts {
	case "json_object": // llama-cpp-python: a validation error, as a 500
		http.Error(w, `{"error":{"message":"1 validation error: ('body', 'response_format', 'type'): Input should be 'text' or 'json_object' (input: '`+
			asked+`')","type":"internal_server_error"}}`, http.StatusInternalServerError)
	case "tools":
		http.Error(w, `{"error":{"message":"response_format is not supported by this model","type":"invalid_request_error","param":"response_format"}}`,
			http.StatusBadRequest)
	default: // a server of json_schema alone
		http.Error(w, `{"error":{"message":"`+asked+` is not supported; use response_format json_schema","type":"invalid_request_error"}}`,
			http.StatusBadRequest)
	}
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	s.EmbeddingCalls.Add(1)
	s.traced(r)
	var req struct {
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Dimensions <= 0 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	fail, tokens := s.failEmb > 0, 1
	if fail {
		s.failEmb--
	}
	if s.usage != nil {
		tokens = s.usage.perInput * len(req.Input)
	}
	silent := s.silent
	if silent {
		tokens = 0
	}
	s.mu.Unlock()
	record := func(failed bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		r := EmbeddingRequest{Texts: req.Input, Inputs: len(req.Input), Tokens: tokens, Failed: failed}
		if failed {
			r.Tokens = 0
		}
		s.embReqs = append(s.embReqs, r)
	}
	if fail {
		record(true)
		http.Error(w, `{"error":{"message":"boom","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	switch s.fault() {
	case Fault429:
		record(true)
		http.Error(w, `{"error":{"message":"rate limited","type":"rate_limit_error"}}`, http.StatusTooManyRequests)
		return
	case Fault500, FaultEmpty, FaultMalformed, FaultTimeout:
		record(true)
		http.Error(w, `{"error":{"message":"boom","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	record(false)
	data := make([]any, len(req.Input))
	for i, text := range req.Input {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Vector(text, req.Dimensions)}
	}
	answer := map[string]any{"object": "list", "data": data, "model": "scripted"}
	if !silent {
		answer["usage"] = map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}
	}
	writeJSON(w, answer)
}

// Vector is the deterministic unit vector the server answers for text.
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		h := fnv.New32a()
		h.Write([]byte(text))
		h.Write([]byte{byte(i), byte(i >> 8)})
		v[i] = float32(h.Sum32()%2000)/1000 - 1
		norm += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
