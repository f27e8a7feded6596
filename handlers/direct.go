package handlers

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/service"
)

// directFactWait is how long POST /v1/facts and add_fact wait for the pipeline to add
// the fact before they answer 202 with its memory: 10 seconds, or half of what is left
// of the request's time.
func directFactWait(ctx context.Context) time.Duration {
	wait := 10 * time.Second
	if deadline, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(deadline)/2)
	}
	return wait
}

// factRequest is the body of POST /v1/facts: a fact an agent states directly.
type factRequest struct {
	AgentID    string     `json:"agent_id"`
	Visibility string     `json:"visibility"`
	Team       string     `json:"team"`
	Source     entityRef  `json:"source"`
	Relation   string     `json:"relation"`
	Target     entityRef  `json:"target"`
	Fact       string     `json:"fact"`
	ValidAt    *time.Time `json:"valid_at"`
	InvalidAt  *time.Time `json:"invalid_at"`
}

type entityRef struct {
	Name string `json:"name" jsonschema:"the entity's name"`
	Type string `json:"type,omitempty" jsonschema:"its type, e.g. Person or Organization (optional)"`
}

func (r factRequest) toNew() service.NewFact {
	return service.NewFact{AgentID: r.AgentID, Visibility: r.Visibility, Team: r.Team,
		Source: service.NamedEntity(r.Source), Relation: r.Relation, Target: service.NamedEntity(r.Target),
		Fact: r.Fact, ValidAt: r.ValidAt, InvalidAt: r.InvalidAt}
}

// addFact answers 201 with the fact once the pipeline has added it, or 202 with the
// memory that records it when that takes longer than directFactWait, or at once when
// the request says Prefer: respond-async (RFC 7240).
func (a *api) addFact(c echo.Context) error {
	var req factRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	wait := directFactWait(ctx)
	if respondAsync(c.Request().Header) {
		wait = 0
		c.Response().Header().Set("Preference-Applied", "respond-async")
	}
	hit, added, err := a.svc.AddFact(ctx, callOf(c), req.toNew(), c.Request().Header.Get("Idempotency-Key"), wait)
	switch {
	case err != nil:
		return err
	case hit == nil:
		return c.JSON(http.StatusAccepted, acceptedOf(added))
	}
	return c.JSON(http.StatusCreated, factViewOf(hit))
}

// respondAsync says whether the request asks for an answer without waiting: a Prefer
// header (RFC 7240) naming the preference respond-async.
func respondAsync(h http.Header) bool {
	for _, v := range h.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			name, _, _ := strings.Cut(p, ";")
			if strings.EqualFold(strings.TrimSpace(name), "respond-async") {
				return true
			}
		}
	}
	return false
}

type mcpFact struct {
	AgentID    string     `json:"agent_id" jsonschema:"the agent whose memory this is"`
	Source     entityRef  `json:"source" jsonschema:"the fact's subject"`
	Relation   string     `json:"relation" jsonschema:"the relation in SCREAMING_SNAKE_CASE, e.g. WORKS_AT"`
	Target     entityRef  `json:"target" jsonschema:"the fact's object"`
	Fact       string     `json:"fact,omitempty" jsonschema:"the fact as a sentence (default: source, relation and target in words)"`
	Visibility string     `json:"visibility,omitempty" jsonschema:"private (the default), public, team, or shared"`
	Team       string     `json:"team,omitempty" jsonschema:"the team, with visibility team"`
	ValidAt    *time.Time `json:"valid_at,omitempty" jsonschema:"since when it holds (RFC 3339)"`
	InvalidAt  *time.Time `json:"invalid_at,omitempty" jsonschema:"when it stopped holding (RFC 3339)"`
}

func (t mcpTools) addFact(ctx context.Context, c service.Call, in mcpFact) (any, error) {
	f := factRequest{AgentID: in.AgentID, Visibility: in.Visibility, Team: in.Team, Source: in.Source, Relation: in.Relation,
		Target: in.Target, Fact: in.Fact, ValidAt: in.ValidAt, InvalidAt: in.InvalidAt}
	hit, added, err := t.svc.AddFact(ctx, c, f.toNew(), "", directFactWait(ctx))
	switch {
	case err != nil:
		return nil, err
	case hit == nil:
		return acceptedOf(added), nil
	}
	return factViewOf(hit), nil
}
