package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/service"
)

// contextRequest is the body of POST /v1/agents/{id}/context: the recent conversation
// or a query.
type contextRequest struct {
	Messages  []messageRequest `json:"messages"`
	Query     string           `json:"query"`
	MaxTokens int              `json:"max_tokens"`
	AsOf      *time.Time       `json:"as_of"`
	Scopes    []string         `json:"scopes"`
	// The type and attribute filters, as search's.
	EntityTypes    []string       `json:"entity_types"`
	EdgeTypes      []string       `json:"edge_types"`
	Attributes     map[string]any `json:"attributes"`
	EdgeAttributes map[string]any `json:"edge_attributes"`
}

// contextResponse is a context block for an agent's prompt and the ids it drew on.
type contextResponse struct {
	Context   string   `json:"context"`
	Tokens    int      `json:"tokens"`
	Tokenizer string   `json:"tokenizer"`
	Facts     []string `json:"facts"`
	Entities  []string `json:"entities"`
	Episodes  []string `json:"episodes"`
}

func contextResponseOf(tc *service.TurnContext) contextResponse {
	return contextResponse{Context: tc.Text, Tokens: tc.Tokens, Tokenizer: tc.Tokenizer, Facts: tc.Facts,
		Entities: tc.Entities, Episodes: tc.Episodes}
}

func messagesOf(msgs []messageRequest) []graph.Message {
	if msgs == nil {
		return nil
	}
	out := make([]graph.Message, len(msgs))
	for i, m := range msgs {
		out[i] = graph.Message{Role: m.Role, Content: m.Content, Name: m.Name, Timestamp: m.Timestamp}
	}
	return out
}

func (a *api) agentContext(c echo.Context) error {
	var req contextRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	tc, err := a.svc.Context(c.Request().Context(), callOf(c), service.ContextQuery{AgentID: c.Param("id"),
		Messages: messagesOf(req.Messages), Query: req.Query, MaxTokens: req.MaxTokens, AsOf: req.AsOf, Scopes: req.Scopes,
		Types: graph.TypeQuery{EntityTypes: req.EntityTypes, EdgeTypes: req.EdgeTypes, Attributes: req.Attributes,
			EdgeAttributes: req.EdgeAttributes}})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, contextResponseOf(tc))
}

type mcpContext struct {
	AgentID   string           `json:"agent_id" jsonschema:"the agent whose memory to draw on"`
	Messages  []messageRequest `json:"messages,omitempty" jsonschema:"the recent conversation, oldest first (role, content): the query is built from it, tool output and long JSON left out"`
	Query     string           `json:"query,omitempty" jsonschema:"what the turn is about, instead of messages"`
	MaxTokens int              `json:"max_tokens,omitempty" jsonschema:"the most tokens the context may hold (default 1000)"`
	AsOf      *time.Time       `json:"as_of,omitempty" jsonschema:"the facts that held at this time (RFC 3339), instead of the current ones, and the memories said by then; no entity summaries (they are written from what is known now)"`
	Scopes    []string         `json:"scopes,omitempty" jsonschema:"team:NAME or global, to draw on those spaces too"`
	mcpTypes
}

func (t mcpTools) context(ctx context.Context, c service.Call, in mcpContext) (any, error) {
	tc, err := t.svc.Context(ctx, c, service.ContextQuery{AgentID: in.AgentID, Messages: messagesOf(in.Messages),
		Query: in.Query, MaxTokens: in.MaxTokens, AsOf: in.AsOf, Scopes: in.Scopes, Types: in.query()})
	if err != nil {
		return nil, err
	}
	return contextResponseOf(tc), nil
}
