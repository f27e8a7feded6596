package client

import (
	"context"
	"net/url"
	"time"
)

// ContextRequest is the body of POST /v1/agents/{id}/context: the recent conversation
// (Messages, oldest first) or a Query, not both.
type ContextRequest struct {
	Messages  []ContextMessage `json:"messages,omitempty"`
	Query     string           `json:"query,omitempty"`
	MaxTokens int              `json:"max_tokens,omitempty"` // 0: memgate's default, 1000
	AsOf      *time.Time       `json:"as_of,omitempty"`
	Scopes    []string         `json:"scopes,omitempty"`
}

// ContextMessage is one message of the conversation a context is drawn for.
type ContextMessage struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	Name      string     `json:"name,omitempty"`
	Timestamp *time.Time `json:"timestamp,omitempty"`
}

// ContextResponse is a block of memory for an agent's prompt: its text, its size in
// tokens of the tokenizer named, and the ids of what it drew on.
type ContextResponse struct {
	Context   string   `json:"context"`
	Tokens    int      `json:"tokens"`
	Tokenizer string   `json:"tokenizer"`
	Facts     []string `json:"facts"`
	Entities  []string `json:"entities"`
	Episodes  []string `json:"episodes"`
}

// Context asks for the memory that bears on agentID's next turn, as the requester
// sees it.
func (c *Client) Context(ctx context.Context, agentID string, req ContextRequest) (ContextResponse, error) {
	var out ContextResponse
	err := c.do(ctx, "POST", "/v1/agents/"+url.PathEscape(agentID)+"/context", req, "", &out)
	return out, err
}
