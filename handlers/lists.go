package handlers

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/service"
)

// The lists of agents, teams and entities: GET /v1/agents, /v1/teams, /v1/entities,
// and the MCP tool list_entities.

// listedAgent is an agent as GET /v1/agents/{id} shows it to the requester, with the
// requester's relation to it.
type listedAgent struct {
	agentView
	Relation string `json:"relation"` // owner, shared, or none (an admin's list)
}

type agentPage struct {
	Items      []listedAgent `json:"items"`
	NextCursor string        `json:"next_cursor,omitempty"`
	HasMore    bool          `json:"has_more"`
}

func (a *api) listAgents(c echo.Context) error {
	if err := queryParams(c, "all", "owner", "cursor", "limit"); err != nil {
		return err
	}
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	all, err := queryBool(c, "all")
	if err != nil {
		return err
	}
	page, err := a.svc.ListAgents(c.Request().Context(), callOf(c), service.AgentList{All: all, Owner: c.QueryParam("owner"),
		Page: pr})
	if err != nil {
		return err
	}
	out := agentPage{Items: []listedAgent{}, NextCursor: page.NextCursor, HasMore: page.HasMore}
	for _, l := range page.Agents {
		out.Items = append(out.Items, listedAgent{agentView: agentViewOf(callOf(c).P.Org, l.AgentView), Relation: l.Relation})
	}
	return c.JSON(http.StatusOK, out)
}

// listedTeam is a team of GET /v1/teams: what GET /v1/teams/{team} shows but its
// members, and the requester's role in it (none when it only owns it, or in an
// admin's list).
type listedTeam struct {
	Name      string     `json:"name"`
	GroupID   string     `json:"group_id"`
	CreatedAt time.Time  `json:"created_at"`
	OwnerID   string     `json:"owner_id"`
	Role      graph.Role `json:"role,omitempty"`
}

type teamPage struct {
	Items      []listedTeam `json:"items"`
	NextCursor string       `json:"next_cursor,omitempty"`
	HasMore    bool         `json:"has_more"`
}

func (a *api) listTeams(c echo.Context) error {
	if err := queryParams(c, "all", "cursor", "limit"); err != nil {
		return err
	}
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	all, err := queryBool(c, "all")
	if err != nil {
		return err
	}
	page, err := a.svc.ListTeams(c.Request().Context(), callOf(c), all, pr)
	if err != nil {
		return err
	}
	out := teamPage{Items: []listedTeam{}, NextCursor: page.NextCursor, HasMore: page.HasMore}
	for _, l := range page.Teams {
		out.Items = append(out.Items, listedTeam{Name: l.Team.Name, GroupID: callOf(c).P.Org.Team(l.Team.Name).GroupID(),
			CreatedAt: l.Team.CreatedAt, OwnerID: l.Team.OwnerID, Role: l.Role})
	}
	return c.JSON(http.StatusOK, out)
}

type entityPage struct {
	Items      []entityView `json:"items"`
	NextCursor string       `json:"next_cursor,omitempty"`
	HasMore    bool         `json:"has_more"`
}

func entityPageOf(page graph.EntityPage) entityPage {
	out := entityPage{Items: []entityView{}, NextCursor: page.NextCursor, HasMore: page.HasMore}
	for _, e := range page.Entities {
		out.Items = append(out.Items, entityViewOf(e))
	}
	return out
}

func (a *api) listEntities(c echo.Context) error {
	if err := queryParams(c, "agent_id", "type", "entity_types", "attributes[]", "name_prefix", "cursor", "limit"); err != nil {
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
	page, err := a.svc.ListEntities(c.Request().Context(), callOf(c), service.EntityList{AgentID: c.QueryParam("agent_id"),
		Type: c.QueryParam("type"), Types: types, NamePrefix: c.QueryParam("name_prefix"),
		Page: pr})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entityPageOf(page))
}

// mcpEntities is the arguments of the MCP tool list_entities.
type mcpEntities struct {
	AgentID     string         `json:"agent_id" jsonschema:"the agent whose entities to list"`
	Type        string         `json:"type,omitempty" jsonschema:"only entities of this type (Person, Organization, Location, ...)"`
	EntityTypes []string       `json:"entity_types,omitempty" jsonschema:"only entities of these types (the deployment's entity types), instead of type"`
	Attributes  map[string]any `json:"attributes,omitempty" jsonschema:"only entities whose attributes have these values (name: value; attributes the deployment's entity types declare)"`
	NamePrefix  string         `json:"name_prefix,omitempty" jsonschema:"only entities whose name starts with this, ignoring case"`
	Limit       int            `json:"limit,omitempty" jsonschema:"entities per page"`
	Cursor      string         `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

func (t mcpTools) entities(ctx context.Context, c service.Call, in mcpEntities) (any, error) {
	page, err := t.svc.ListEntities(ctx, c, service.EntityList{AgentID: in.AgentID, Type: in.Type,
		Types: graph.TypeQuery{EntityTypes: in.EntityTypes, Attributes: in.Attributes}, NamePrefix: in.NamePrefix,
		Page: graph.PageRequest{Cursor: in.Cursor, Limit: in.Limit}})
	if err != nil {
		return nil, err
	}
	return entityPageOf(page), nil
}

// queryParams refuses a query parameter the route does not take, and one given more
// than once: a misspelt filter must not read as no filter. A name ending in [] takes
// the parameters of an object (attributes[tier]).
func queryParams(c echo.Context, names ...string) error {
	for name, values := range c.QueryParams() {
		if (strings.HasSuffix(name, "[]") || !slices.Contains(names, name)) && !slices.Contains(names, objectParam(name)) {
			if r := []rune(name); len(r) > 64 { // cut whole characters, never inside one
				name = string(r[:64]) + "…"
			}
			return graph.Errorf(graph.EINVALID, "unknown query parameter %q", name)
		}
		if len(values) > 1 {
			return graph.Errorf(graph.EINVALID, "query parameter %s is given more than once", name)
		}
	}
	return nil
}

// objectParam is "attributes[]" for attributes[tier], the parameter of an object
// (OpenAPI's deepObject) name is; "" for any other.
func objectParam(name string) string {
	open := strings.IndexByte(name, '[')
	if open <= 0 || !strings.HasSuffix(name, "]") || open == len(name)-2 || strings.ContainsAny(name[open+1:len(name)-1], "[]") {
		return ""
	}
	return name[:open] + "[]"
}

// typesQuery reads the type filters of a list's URL: entity_types and edge_types,
// comma-separated; attributes[NAME]=VALUE and edge_attributes[NAME]=VALUE, each value
// read by its attribute's declared type (graph.AttributeText).
func typesQuery(c echo.Context) (graph.TypeQuery, error) {
	var q graph.TypeQuery
	list := func(name string) []string {
		if v := c.QueryParam(name); v != "" {
			return strings.Split(v, ",")
		}
		return nil
	}
	q.EntityTypes, q.EdgeTypes = list("entity_types"), list("edge_types")
	for name, values := range c.QueryParams() {
		var m *map[string]any
		switch objectParam(name) {
		case "attributes[]":
			m = &q.Attributes
		case "edge_attributes[]":
			m = &q.EdgeAttributes
		default:
			continue
		}
		if *m == nil {
			*m = map[string]any{}
		}
		(*m)[name[strings.IndexByte(name, '[')+1:len(name)-1]] = graph.AttributeText(values[0])
	}
	return q, nil
}

// queryBool reads a true or false query parameter; none is false.
func queryBool(c echo.Context, name string) (bool, error) {
	switch c.QueryParam(name) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, graph.Errorf(graph.EINVALID, "%s must be true or false", name)
}
