// Package client is a small Go client for memgate's REST API, and the import and
// export of JSON Lines and CSV files built on it. It uses the standard library only.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client calls one memgate for one requester through one host key.
type Client struct {
	BaseURL   string // e.g. http://127.0.0.1:8080
	Key       string // the host key; "" in dev mode
	Requester string // X-Requester-Id
	HTTP      *http.Client

	// fresh is the consistency token of the last write this client made: sent with
	// every later request, so the client reads its own writes whichever replica
	// answers (docs/operations.md).
	mu    sync.Mutex
	fresh string
}

// New returns a client with a 30 s timeout per request.
func New(baseURL, key, requester string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Key: key, Requester: requester,
		HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Error is memgate's error answer.
type Error struct {
	Status    int    `json:"-"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("memgate: %d %s: %s (request %s)", e.Status, e.Code, e.Message, e.RequestID)
}

// Memory is a memory to add: the body of POST /v1/memories, every field a write
// takes. Messages is a string or a list of {role, content, name?, timestamp?}.
type Memory struct {
	AgentID           string         `json:"agent_id"`
	Messages          any            `json:"messages"`
	Visibility        string         `json:"visibility,omitempty"`
	Team              string         `json:"team,omitempty"`
	Metadata          map[string]any `json:"metadata,omitempty"`
	ReferenceTime     *time.Time     `json:"reference_time,omitempty"`
	Source            string         `json:"source,omitempty"`
	SourceDescription string         `json:"source_description,omitempty"`
	Tags              []string       `json:"tags,omitempty"`
	Priority          string         `json:"priority,omitempty"`
	ExpiresAt         *time.Time     `json:"expires_at,omitempty"`
	Confidence        *float64       `json:"confidence,omitempty"`
	Extract           *bool          `json:"extract,omitempty"` // false: stored without extraction
	// ExtractionInstructions are passed to the model for this memory only.
	ExtractionInstructions string `json:"extraction_instructions,omitempty"`
}

// Accepted is the answer to an add.
type Accepted struct {
	ID       string `json:"id"`
	GroupID  string `json:"group_id"`
	Status   string `json:"status"`
	Confined bool   `json:"confined"`
	Replayed bool   `json:"replayed"`
}

// BatchResult is one item's outcome in a batch: Accepted or Error.
type BatchResult struct {
	Index int `json:"index"`
	*Accepted
	Error *Error `json:"error"`
}

// Stored is a memory as memgate shows it, every field (handlers' memoryView;
// TestRoundTrip compares the two).
type Stored struct {
	ID                     string          `json:"id"`
	AgentID                string          `json:"agent_id"`
	GroupID                string          `json:"group_id"`
	Space                  string          `json:"space"`
	Status                 string          `json:"status"`
	Attempts               int             `json:"attempts"`
	LastError              string          `json:"last_error,omitempty"`
	Source                 string          `json:"source"`
	SourceDescription      string          `json:"source_description,omitempty"`
	Content                string          `json:"content"`
	Messages               json.RawMessage `json:"messages,omitempty"`
	Metadata               map[string]any  `json:"metadata,omitempty"`
	Tags                   []string        `json:"tags,omitempty"`
	Priority               string          `json:"priority,omitempty"`
	Confidence             *float64        `json:"confidence,omitempty"`
	ReferenceTime          time.Time       `json:"reference_time"`
	CreatedAt              time.Time       `json:"created_at"`
	ExpiresAt              *time.Time      `json:"expires_at,omitempty"`
	PromotedFrom           string          `json:"promoted_from,omitempty"`
	PromotedBy             string          `json:"promoted_by,omitempty"`
	PromotedAt             *time.Time      `json:"promoted_at,omitempty"`
	DerivedFrom            []string        `json:"derived_from,omitempty"`
	VisibilityRule         string          `json:"visibility_rule,omitempty"`
	WrittenBy              string          `json:"written_by,omitempty"`
	Version                int             `json:"version"`
	UpdatedAt              *time.Time      `json:"updated_at,omitempty"`
	UpdatedBy              string          `json:"updated_by,omitempty"`
	Extract                *bool           `json:"extract,omitempty"`
	ExtractionInstructions string          `json:"extraction_instructions,omitempty"`
	Cost                   Cost            `json:"cost"`
	Score                  *float64        `json:"score,omitempty"`
}

// Cost is what extracting a memory cost so far, every attempt summed: calls to the
// model provider, the tokens it reported, and the time the attempts took (handlers'
// costView; TestRoundTrip compares the two).
type Cost struct {
	ChatCalls        int64   `json:"chat_calls"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	EmbeddingCalls   int64   `json:"embedding_calls"`
	EmbeddingInputs  int64   `json:"embedding_inputs"`
	EmbeddingTokens  int64   `json:"embedding_tokens"`
	Seconds          float64 `json:"seconds"`
	Estimated        bool    `json:"estimated"`
}

// Add returns c and o summed.
func (c Cost) Add(o Cost) Cost {
	return Cost{ChatCalls: c.ChatCalls + o.ChatCalls, PromptTokens: c.PromptTokens + o.PromptTokens,
		CompletionTokens: c.CompletionTokens + o.CompletionTokens, EmbeddingCalls: c.EmbeddingCalls + o.EmbeddingCalls,
		EmbeddingInputs: c.EmbeddingInputs + o.EmbeddingInputs, EmbeddingTokens: c.EmbeddingTokens + o.EmbeddingTokens,
		Seconds: c.Seconds + o.Seconds}
}

// Memory is what writing s again takes: the fields its writer set, its space as a
// visibility and team, its messages (its content when it had none). What the server
// set (id, status, versions, promotion, derivation) stays behind.
func (s Stored) Memory() Memory {
	kind, team, _ := strings.Cut(s.Space, ":")
	m := Memory{AgentID: s.AgentID, Visibility: kind, Team: team, Metadata: s.Metadata,
		Source: s.Source, SourceDescription: s.SourceDescription, Tags: s.Tags, Priority: s.Priority,
		ExpiresAt: s.ExpiresAt, Confidence: s.Confidence, Messages: s.Content, Extract: s.Extract,
		ExtractionInstructions: s.ExtractionInstructions}
	if !s.ReferenceTime.IsZero() { // a line written by hand may have none: the write's time then
		at := s.ReferenceTime
		m.ReferenceTime = &at
	}
	if len(s.Messages) > 0 {
		m.Messages = s.Messages
	}
	return m
}

// Page is one page of a list.
type Page struct {
	Items      []Stored `json:"items"`
	NextCursor string   `json:"next_cursor"`
	HasMore    bool     `json:"has_more"`
}

// Add stores one memory; idempotencyKey ("" for none) makes a retry safe.
func (c *Client) Add(ctx context.Context, m Memory, idempotencyKey string) (*Accepted, error) {
	var out Accepted
	return &out, c.do(ctx, "POST", "/v1/memories", m, idempotencyKey, &out)
}

// AddBatch stores several memories, each on its own. With an idempotency key K, item
// i is keyed K#i on the server.
func (c *Client) AddBatch(ctx context.Context, items []Memory, idempotencyKey string) ([]BatchResult, error) {
	var out struct {
		Results []BatchResult `json:"results"`
	}
	err := c.do(ctx, "POST", "/v1/memories/batch", map[string]any{"items": items}, idempotencyKey, &out)
	return out.Results, err
}

// Get reads one memory.
func (c *Client) Get(ctx context.Context, id string) (*Stored, error) {
	var out Stored
	return &out, c.do(ctx, "GET", "/v1/memories/"+url.PathEscape(id), nil, "", &out)
}

// List reads one page of an agent's memories (space "" for all it may see).
func (c *Client) List(ctx context.Context, agentID, space, cursor string, limit int) (*Page, error) {
	q := url.Values{"agent_id": {agentID}, "limit": {fmt.Sprint(limit)}}
	if space != "" {
		q.Set("space", space)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var out Page
	return &out, c.do(ctx, "GET", "/v1/memories?"+q.Encode(), nil, "", &out)
}

// FactPage is one page of facts, each as memgate shows it.
type FactPage struct {
	Items      []json.RawMessage `json:"items"`
	NextCursor string            `json:"next_cursor"`
	HasMore    bool              `json:"has_more"`
}

// Facts reads one page of an agent's facts, whatever their time.
func (c *Client) Facts(ctx context.Context, agentID, cursor string, limit int) (*FactPage, error) {
	q := url.Values{"agent_id": {agentID}, "limit": {fmt.Sprint(limit)}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var out FactPage
	return &out, c.do(ctx, "GET", "/v1/facts?"+q.Encode(), nil, "", &out)
}

// CreateAgent creates an agent owned by the client's requester.
func (c *Client) CreateAgent(ctx context.Context, id string) error {
	return c.do(ctx, "POST", "/v1/agents", map[string]any{"id": id}, "", nil)
}

// Search runs POST /v1/memories/search with the given body and decodes the answer
// into out.
func (c *Client) Search(ctx context.Context, body map[string]any, out any) error {
	return c.do(ctx, "POST", "/v1/memories/search", body, "", out)
}

func (c *Client) do(ctx context.Context, method, path string, body any, idempotencyKey string, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Requester-Id", c.Requester)
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	if token := c.Token(); token != "" {
		req.Header.Set(consistencyHeader, token)
	}
	// Over the host key's rate (429): sent again up to five times, after as long as
	// memgate says, a second at least. The last 429 is answered as an Error.
	var resp *http.Response
	err = overRate.Retry(ctx, func() error {
		if resp != nil {
			resp.Body.Close() // the 429 before
		}
		if body != nil {
			req.Body, _ = req.GetBody()
		}
		var err error
		if resp, err = c.HTTP.Do(req); err != nil {
			return err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			return tooMany(time.Duration(wait) * time.Second)
		}
		return nil
	})
	if err != nil {
		if _, over := err.(tooMany); !over {
			return err // nothing answered
		}
		if ctx.Err() != nil {
			resp.Body.Close()
			return ctx.Err() // it ended during the wait
		}
		// the sixth 429: read as an Error below
	}
	defer resp.Body.Close()
	if token := resp.Header.Get(consistencyHeader); token != "" {
		c.mu.Lock()
		c.fresh = token
		c.mu.Unlock()
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct{ Error Error }
		if json.Unmarshal(data, &e) != nil || e.Error.Code == "" {
			e.Error = Error{Code: "unknown", Message: strings.TrimSpace(string(data))}
		}
		e.Error.Status = resp.StatusCode
		return &e.Error
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	return json.Unmarshal(data, out)
}

const consistencyHeader = "X-Consistency-Token"

// Token is the consistency token of the last write the client made ("" before its
// first): another client that sends it (SetToken) reads at least as fresh.
func (c *Client) Token() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fresh
}

// SetToken makes the client read at least as fresh as the write that answered
// token, e.g. one another client made (Token).
func (c *Client) SetToken(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fresh = token
}

// overRate sends a request again while memgate answers 429 (see do).
var overRate = Backoff{First: time.Second, Max: time.Second, Tries: 6,
	Again: func(err error) bool { _, over := err.(tooMany); return over }}

// tooMany is a 429 answer that waits for its Retry-After.
type tooMany time.Duration

func (t tooMany) Error() string             { return "memgate: 429 over the host key's rate" }
func (t tooMany) RetryAfter() time.Duration { return time.Duration(t) }
