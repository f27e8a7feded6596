package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/service"
)

// conflictView is a contradiction held for review (memory.conflicts: review) with
// its two facts as they are now.
type conflictView struct {
	ID         string     `json:"id"`
	GroupID    string     `json:"group_id"`
	Visibility string     `json:"visibility"`
	EpisodeID  string     `json:"episode_id"` // the memory whose extraction found it
	CreatedAt  time.Time  `json:"created_at"`
	Status     string     `json:"status"` // open or resolved
	Keep       string     `json:"keep,omitempty"`
	ResolvedBy string     `json:"resolved_by,omitempty"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
	Old        factView   `json:"old"`
	New        factView   `json:"new"`
}

func conflictViewOf(h *graph.ConflictHit) conflictView {
	c := h.Conflict
	status := "open"
	if c.Keep != "" {
		status = "resolved"
	}
	return conflictView{ID: c.UUID, GroupID: c.GroupID, Visibility: visibility(c.GroupID), EpisodeID: c.Episode,
		CreatedAt: c.CreatedAt, Status: status, Keep: c.Keep, ResolvedBy: c.ResolvedBy, ResolvedAt: c.ResolvedAt,
		Old: factViewOf(&h.Old), New: factViewOf(&h.New)}
}

type conflictPage struct {
	Items      []conflictView `json:"items"`
	NextCursor string         `json:"next_cursor,omitempty"`
	HasMore    bool           `json:"has_more"`
}

type resolveRequest struct {
	Keep string `json:"keep"` // old, new or both
}

// mcpConflicts and mcpResolve are the arguments of the MCP tools list_conflicts and
// resolve_conflict.
type mcpConflicts struct {
	AgentID string `json:"agent_id" jsonschema:"the agent whose spaces to list the open conflicts of"`
	Limit   int    `json:"limit,omitempty" jsonschema:"conflicts per page"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

type mcpResolve struct {
	ID   string `json:"id" jsonschema:"the conflict's id"`
	Keep string `json:"keep" jsonschema:"old (the new fact never held), new (the old one ended when the new one began) or both"`
}

func (t mcpTools) conflicts(ctx context.Context, c service.Call, in mcpConflicts) (any, error) {
	page, err := t.svc.ListConflicts(ctx, c, in.AgentID, graph.PageRequest{Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	return conflictPageOf(page), nil
}

func (t mcpTools) resolve(ctx context.Context, c service.Call, in mcpResolve) (any, error) {
	h, err := t.svc.ResolveConflict(ctx, c, in.ID, in.Keep)
	if err != nil {
		return nil, err
	}
	return conflictViewOf(h), nil
}

func (a *api) listConflicts(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	page, err := a.svc.ListConflicts(c.Request().Context(), callOf(c), c.QueryParam("agent_id"),
		pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, conflictPageOf(page))
}

func conflictPageOf(page graph.ConflictPage) conflictPage {
	out := conflictPage{Items: []conflictView{}, NextCursor: page.NextCursor, HasMore: page.HasMore}
	for i := range page.Conflicts {
		out.Items = append(out.Items, conflictViewOf(&page.Conflicts[i]))
	}
	return out
}

func (a *api) resolveConflict(c echo.Context) error {
	var req resolveRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	h, err := a.svc.ResolveConflict(c.Request().Context(), callOf(c), c.Param("id"), req.Keep)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, conflictViewOf(h))
}
