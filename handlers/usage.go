package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/graph"
)

// costView is a graph.Cost as the API shows it: a memory's cost, and an agent's usage
// summed. The one mapping of the shape; the Go client's Cost has the same fields.
type costView struct {
	ChatCalls        int64   `json:"chat_calls"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	EmbeddingCalls   int64   `json:"embedding_calls"`
	EmbeddingInputs  int64   `json:"embedding_inputs"`
	EmbeddingTokens  int64   `json:"embedding_tokens"`
	Seconds          float64 `json:"seconds"`
	Estimated        bool    `json:"estimated"`
}

func costViewOf(c graph.Cost) costView {
	return costView{ChatCalls: c.ChatCalls, PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens,
		EmbeddingCalls: c.EmbeddingCalls, EmbeddingInputs: c.EmbeddingInputs, EmbeddingTokens: c.EmbeddingTokens,
		Seconds: c.Seconds, Estimated: c.Estimated}
}

// usageView is the answer of GET /v1/agents/{id}/usage: the window asked for (each
// bound only when given), how many memories it holds and what they cost.
type usageView struct {
	AgentID  string     `json:"agent_id"`
	Since    *time.Time `json:"since,omitempty"`
	Until    *time.Time `json:"until,omitempty"`
	Memories int        `json:"memories"`
	Cost     costView   `json:"cost"`
}

func (a *api) agentUsage(c echo.Context) error {
	if err := queryParams(c, "since", "until"); err != nil {
		return err
	}
	q := graph.UsageQuery{AgentID: c.Param("id")}
	for _, p := range []struct {
		name string
		at   **time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		name, at := p.name, p.at
		if _, given := c.QueryParams()[name]; !given {
			continue
		}
		t, err := queryTime(c, name)
		if err == nil && t == nil {
			err = graph.Errorf(graph.EINVALID, "%s must be an RFC 3339 time", name) // given empty
		}
		if err != nil {
			return err
		}
		*at = t
	}
	u, err := a.svc.Usage(c.Request().Context(), callOf(c), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, usageViewOf(q, u))
}

func usageViewOf(q graph.UsageQuery, u graph.Usage) usageView {
	return usageView{AgentID: q.AgentID, Since: q.Since, Until: q.Until, Memories: u.Memories, Cost: costViewOf(u.Cost)}
}
