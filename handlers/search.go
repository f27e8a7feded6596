package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/service"
)

type searchRequest struct {
	Query          string         `json:"query"`
	AgentID        string         `json:"agent_id"`
	Limit          int            `json:"limit"`
	Scopes         []string       `json:"scopes"`
	Include        []string       `json:"include"`
	CenterEntityID string         `json:"center_entity_id"`
	MaxDepth       int            `json:"max_depth"`
	EntityTypes    []string       `json:"entity_types"`
	EdgeTypes      []string       `json:"edge_types"`
	Attributes     map[string]any `json:"attributes"`
	EdgeAttributes map[string]any `json:"edge_attributes"`
	Relations      []string       `json:"relations"`
	CreatedAfter   *time.Time     `json:"created_after"`
	CreatedBefore  *time.Time     `json:"created_before"`
	AsOf           *time.Time     `json:"as_of"`
	IncludeExpired bool           `json:"include_expired"`
	MMR            bool           `json:"mmr"`
}

type searchResponse struct {
	Facts    []factView   `json:"facts"`
	Entities []entityView `json:"entities"`
	Episodes []memoryView `json:"episodes"`
}

// entityView is an entity as the API shows it; Score only in search results.
type entityView struct {
	ID         string `json:"id"`
	GroupID    string `json:"group_id"`
	Visibility string `json:"visibility"`
	Name       string `json:"name"`
	Type       string `json:"type,omitempty"`
	Summary    string `json:"summary,omitempty"`
	// Attributes are the values of its type's attributes (a date as YYYY-MM-DD).
	Attributes map[string]any `json:"attributes,omitempty"`
	// AttributeHistory is every value its attributes were stated to have, oldest
	// first; only GET /v1/entities/{id} shows it.
	AttributeHistory []graph.AttributeChange `json:"attribute_history,omitempty"`
	CreatedAt        time.Time               `json:"created_at"`
	Score            *float64                `json:"score,omitempty"`
}

// factView is a fact as the API shows it: valid_at and invalid_at are world time
// (when it held), created_at and expired_at system time (when memgate learned it and
// learned it no longer holds).
type factView struct {
	ID         string     `json:"id"`
	GroupID    string     `json:"group_id"`
	Visibility string     `json:"visibility"`
	Relation   string     `json:"relation"`
	Fact       string     `json:"fact"`
	Source     entityView `json:"source"`
	Target     entityView `json:"target"`
	ValidAt    *time.Time `json:"valid_at"`
	InvalidAt  *time.Time `json:"invalid_at"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiredAt  *time.Time `json:"expired_at"`
	Episodes   []string   `json:"episodes"`
	Conflicts  []string   `json:"conflicts,omitempty"` // open conflicts it is part of (GET /v1/conflicts)
	// Attributes are the values of its edge type's attributes; Note says why it has
	// the generic relation RELATES_TO (an edge type its ends' types do not allow).
	Attributes map[string]any `json:"attributes,omitempty"`
	Note       string         `json:"note,omitempty"`
	Score      *float64       `json:"score,omitempty"`
}

func visibility(groupID string) string {
	space, _ := graph.ParseGroupID(groupID)
	return string(space.Kind)
}

func entityViewOf(e *graph.EntityNode) entityView {
	return entityView{ID: e.UUID, GroupID: e.GroupID, Visibility: visibility(e.GroupID), Name: e.Name, Type: e.Type,
		Summary: e.Summary, Attributes: attributesView(e.Attributes), CreatedAt: e.CreatedAt}
}

// attributesView is an entity's or fact's attributes as JSON shows them; nil when none.
func attributesView(attrs map[string]any) map[string]any {
	if len(attrs) == 0 {
		return nil
	}
	out := make(map[string]any, len(attrs))
	for name, v := range attrs {
		out[name] = graph.AttributeJSON(v)
	}
	return out
}

func factViewOf(h *graph.FactHit) factView {
	f := h.Fact
	return factView{ID: f.UUID, GroupID: f.GroupID, Visibility: visibility(f.GroupID), Relation: f.Name, Fact: f.Fact,
		Source: entityViewOf(h.Source), Target: entityViewOf(h.Target), ValidAt: f.ValidAt, InvalidAt: f.InvalidAt,
		CreatedAt: f.CreatedAt, ExpiredAt: f.ExpiredAt, Episodes: nonNilStrings(f.Episodes), Conflicts: f.Conflicts,
		Attributes: attributesView(f.Attributes), Note: f.Note}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (a *api) searchMemories(c echo.Context) error {
	var req searchRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	res, err := a.svc.Search(c.Request().Context(), callOf(c), service.SearchQuery{
		Query: req.Query, AgentID: req.AgentID, Limit: req.Limit, Scopes: req.Scopes, Include: req.Include,
		Center: req.CenterEntityID, Depth: req.MaxDepth, MMR: req.MMR,
		Filter: graph.SearchFilter{Relations: req.Relations, CreatedAfter: req.CreatedAfter,
			CreatedBefore: req.CreatedBefore, AsOf: req.AsOf, IncludeExpired: req.IncludeExpired},
		Types: graph.TypeQuery{EntityTypes: req.EntityTypes, EdgeTypes: req.EdgeTypes, Attributes: req.Attributes,
			EdgeAttributes: req.EdgeAttributes},
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, searchResponseOf(res))
}

func searchResponseOf(res *service.SearchResult) searchResponse {
	out := searchResponse{Facts: []factView{}, Entities: []entityView{}, Episodes: []memoryView{}}
	for i := range res.Facts {
		v := factViewOf(&res.Facts[i])
		v.Score = &res.Facts[i].Score
		out.Facts = append(out.Facts, v)
	}
	for i := range res.Entities {
		v := entityViewOf(res.Entities[i].Entity)
		v.Score = &res.Entities[i].Score
		out.Entities = append(out.Entities, v)
	}
	for i := range res.Episodes {
		v := viewOf(res.Episodes[i].Episode)
		v.Score = &res.Episodes[i].Score
		out.Episodes = append(out.Episodes, v)
	}
	return out
}

type factPage struct {
	Items      []factView `json:"items"`
	NextCursor string     `json:"next_cursor,omitempty"`
	HasMore    bool       `json:"has_more"`
}

func (a *api) listFacts(c echo.Context) error {
	if err := queryParams(c, "agent_id", "space", "entity_types", "edge_types", "attributes[]", "edge_attributes[]",
		"cursor", "limit"); err != nil {
		return err
	}
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	types, err := typesQuery(c)
	if err != nil {
		return err
	}
	page, err := a.svc.ListFacts(c.Request().Context(), callOf(c), c.QueryParam("agent_id"), c.QueryParam("space"),
		types, pr)
	if err != nil {
		return err
	}
	out := factPage{Items: []factView{}, NextCursor: page.NextCursor, HasMore: page.HasMore}
	for i := range page.Facts {
		out.Items = append(out.Items, factViewOf(&page.Facts[i]))
	}
	return c.JSON(http.StatusOK, out)
}

func (a *api) getFact(c echo.Context) error {
	h, err := a.svc.GetFact(c.Request().Context(), callOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, factViewOf(h))
}

func (a *api) getEntity(c echo.Context) error {
	e, err := a.svc.GetEntity(c.Request().Context(), callOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	v := entityViewOf(e)
	v.AttributeHistory = e.AttributeHistory
	return c.JSON(http.StatusOK, v)
}
