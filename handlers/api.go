package handlers

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/service"
)

// api holds the /v1 routes that act for a requester.
type api struct {
	svc *service.Service
}

const callKey = "memgate.call"

// requester resolves X-Requester-Id (and X-Requester-Org, a platform host's choice of
// organization), and the teams a host asserts in X-Requester-Teams, into the
// request's principal, once. A request that names more than one requester, or gives
// X-Requester-Org or X-Requester-Teams more than once, is refused: a proxy that
// appends a header must not make the service pick one.
func (a *api) requester(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		names := c.Request().Header.Values("X-Requester-Id")
		if len(names) > 1 || (len(names) == 1 && strings.Contains(names[0], ",")) {
			return graph.Errorf(graph.EINVALID, "X-Requester-Id must be given once")
		}
		orgs := c.Request().Header.Values("X-Requester-Org")
		if len(orgs) > 1 {
			return graph.Errorf(graph.EINVALID, "X-Requester-Org must be given once")
		}
		var asserted map[string]graph.Role
		switch teams := c.Request().Header.Values("X-Requester-Teams"); len(teams) {
		case 0:
		case 1:
			var err error
			if asserted, err = access.ParseAssertedTeams(teams[0]); err != nil {
				return err
			}
		default:
			return graph.Errorf(graph.EINVALID, "X-Requester-Teams must be given once")
		}
		call, err := a.svc.Resolve(c.Request().Context(), hostOf(c), c.Request().Header.Get("X-Requester-Org"),
			c.Request().Header.Get("X-Requester-Id"), asserted, requestID(c))
		if err != nil {
			return err
		}
		c.Set(callKey, call)
		return next(c)
	}
}

func callOf(c echo.Context) service.Call {
	call, _ := c.Get(callKey).(service.Call)
	return call
}

// routes registers every route that acts for a requester; each resolves the
// principal first.
func (a *api) routes(g *echo.Group) {
	g.POST("/memories", a.addMemory, a.requester)
	g.POST("/memories/batch", a.addBatch, a.requester)
	g.POST("/memories/search", a.searchMemories, a.requester)
	g.POST("/memories/compact", a.compactMemories, a.requester)
	g.GET("/memories", a.listMemories, a.requester)
	g.GET("/memories/:id", a.getMemory, a.requester)
	g.DELETE("/memories/:id", a.deleteMemory, a.requester)
	g.PATCH("/memories/:id", a.updateMemory, a.requester)
	g.GET("/memories/:id/versions", a.memoryVersions, a.requester)
	g.POST("/memories/:id/promote", a.promoteMemory, a.requester)
	g.POST("/memories/:id/retry", a.retryMemory, a.requester)
	g.GET("/facts", a.listFacts, a.requester)
	g.GET("/facts/:id", a.getFact, a.requester)
	g.POST("/facts", a.addFact, a.requester)
	g.GET("/entities", a.listEntities, a.requester)
	g.GET("/entities/:id", a.getEntity, a.requester)
	g.GET("/conflicts", a.listConflicts, a.requester)
	g.POST("/conflicts/:id/resolve", a.resolveConflict, a.requester)

	g.POST("/agents", a.createAgent, a.requester)
	g.GET("/agents", a.listAgents, a.requester)
	g.GET("/agents/:id", a.getAgent, a.requester)
	g.DELETE("/agents/:id", a.deleteAgent, a.requester)
	g.POST("/agents/:id/reflect", a.reflectAgent, a.requester)
	g.POST("/agents/:id/context", a.agentContext, a.requester)
	g.GET("/agents/:id/usage", a.agentUsage, a.requester)
	g.PUT("/agents/:id/owner", a.transferOwner, a.requester)
	g.PUT("/agents/:id/types", a.setAgentTypes, a.requester)
	g.PUT("/agents/:id/shares/:principal", a.share(true), a.requester)
	g.DELETE("/agents/:id/shares/:principal", a.share(false), a.requester)
	g.PUT("/agents/:id/delegates/:principal", a.delegate, a.requester)
	g.DELETE("/agents/:id/delegates/:principal", a.undelegate, a.requester)

	g.POST("/teams", a.createTeam, a.requester)
	g.GET("/teams", a.listTeams, a.requester)
	g.GET("/teams/:team", a.getTeam, a.requester)
	g.DELETE("/teams/:team", a.dissolveTeam, a.requester)
	g.PUT("/teams/:team/members/:principal", a.setMember, a.requester)
	g.PUT("/teams/:team/types", a.setTeamTypes, a.requester)
	g.DELETE("/teams/:team/members/:principal", a.removeMember, a.requester)
	g.PUT("/promoters/:principal", a.setPromoter(true), a.requester)
	g.DELETE("/promoters/:principal", a.setPromoter(false), a.requester)
	g.DELETE("/requesters/:id", a.eraseRequester, a.requester)
	g.GET("/audit", a.listAudit, a.requester)

	g.POST("/webhooks", a.createWebhook, a.requester)
	g.GET("/webhooks", a.listWebhooks, a.requester)
	g.GET("/webhooks/:id", a.getWebhook, a.requester)
	g.DELETE("/webhooks/:id", a.deleteWebhook, a.requester)
	g.GET("/webhooks/:id/deliveries", a.webhookDeliveries, a.requester)
}

// detail is the error body of one failed batch item.
func (a *api) detail(c echo.Context, err error) *ErrorDetail {
	_, code, message := classify(err)
	return &ErrorDetail{Code: code, Message: message, RequestID: requestID(c)}
}

type agentRequest struct {
	ID      string `json:"id"`
	OwnerID string `json:"owner_id"`
}

type agentView struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	OwnerID   string    `json:"owner_id,omitempty"`
	// SharedWith lists the grants in force; Shares every grant, lapsed ones marked.
	// Both only for the owner and admin hosts.
	SharedWith []string    `json:"shared_with,omitempty"`
	Shares     []shareView `json:"shares,omitempty"`
	// Delegates lists every delegation, lapsed ones marked; only for the owner and
	// admin hosts.
	Delegates []delegateView `json:"delegates,omitempty"`
	// Types are the types its owner chose for its spaces (PUT .../types); only for
	// the owner and admin hosts, absent when none were chosen.
	Types  *spaceTypes `json:"types,omitempty"`
	Spaces []string    `json:"spaces"`
}

type delegateView struct {
	Principal string     `json:"principal"`
	Role      graph.Role `json:"role"`
	GrantedAt time.Time  `json:"granted_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Expired   bool       `json:"expired"`
}

type shareView struct {
	Principal string     `json:"principal"`
	GrantedAt time.Time  `json:"granted_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Expired   bool       `json:"expired"`
}

func agentViewOf(org graph.Org, v service.AgentView) agentView {
	out := agentView{ID: v.ID, CreatedAt: v.CreatedAt, OwnerID: v.OwnerID,
		Spaces: []string{org.Private(v.ID).GroupID(), org.Public(v.ID).GroupID()}}
	if v.Shares != nil {
		a := graph.Agent{Shares: v.Shares}
		out.SharedWith = a.SharedWith()
	}
	for _, s := range v.Shares {
		out.Shares = append(out.Shares, shareView{Principal: s.Principal, GrantedAt: s.GrantedAt, ExpiresAt: s.ExpiresAt, Expired: s.Expired})
	}
	out.Types = spaceTypesOf(v.Types)
	for _, d := range v.Delegates {
		out.Delegates = append(out.Delegates, delegateView{Principal: d.Principal, Role: d.Role, GrantedAt: d.GrantedAt,
			ExpiresAt: d.ExpiresAt, Expired: d.Expired})
	}
	return out
}

func (a *api) createAgent(c echo.Context) error {
	var req agentRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	ag, err := a.svc.CreateAgent(c.Request().Context(), callOf(c), req.ID, req.OwnerID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, agentViewOf(callOf(c).P.Org, service.AgentView{ID: ag.ID, CreatedAt: ag.CreatedAt, OwnerID: ag.OwnerID}))
}

func (a *api) getAgent(c echo.Context) error {
	v, err := a.svc.GetAgent(c.Request().Context(), callOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, agentViewOf(callOf(c).P.Org, v))
}

func (a *api) deleteAgent(c echo.Context) error {
	n, err := a.svc.DeleteAgent(c.Request().Context(), callOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"erased_memories": n})
}

type ownerRequest struct {
	OwnerID string `json:"owner_id"`
}

func (a *api) transferOwner(c echo.Context) error {
	var req ownerRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if err := a.svc.TransferOwner(c.Request().Context(), callOf(c), c.Param("id"), req.OwnerID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// spaceTypes is the body of PUT /v1/agents/{id}/types and /v1/teams/{team}/types,
// and the types an agent or a team shows: the deployment's entity and edge types
// that apply to the space, by name; null or absent: all of them.
type spaceTypes struct {
	EntityTypes []string `json:"entity_types"`
	EdgeTypes   []string `json:"edge_types"`
}

// spaceTypesOf is t as an agent or a team shows it; nil when none were chosen.
func spaceTypesOf(t *graph.SpaceTypes) *spaceTypes {
	if t == nil {
		return nil
	}
	return &spaceTypes{EntityTypes: t.EntityTypes, EdgeTypes: t.EdgeTypes}
}

func (a *api) setAgentTypes(c echo.Context) error {
	var req spaceTypes
	if err := bind(c, &req); err != nil {
		return err
	}
	t := graph.SpaceTypes{EntityTypes: req.EntityTypes, EdgeTypes: req.EdgeTypes}
	if err := a.svc.SetAgentTypes(c.Request().Context(), callOf(c), c.Param("id"), t); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, req)
}

func (a *api) setTeamTypes(c echo.Context) error {
	var req spaceTypes
	if err := bind(c, &req); err != nil {
		return err
	}
	t := graph.SpaceTypes{EntityTypes: req.EntityTypes, EdgeTypes: req.EdgeTypes}
	if err := a.svc.SetTeamTypes(c.Request().Context(), callOf(c), c.Param("team"), t); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, req)
}

// shareRequest is the optional body of a grant.
type shareRequest struct {
	ExpiresAt *time.Time `json:"expires_at"`
}

func (a *api) share(grant bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req shareRequest
		body, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return decodeError(err) // the body limit
		}
		if len(bytes.TrimSpace(body)) > 0 {
			if !grant {
				return graph.Errorf(graph.EINVALID, "revoking a share takes no body")
			}
			if err := decodeJSON(bytes.NewReader(body), &req); err != nil {
				return err
			}
		}
		if err := a.svc.Share(c.Request().Context(), callOf(c), c.Param("id"), c.Param("principal"), grant, req.ExpiresAt); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// delegateRequest is the body of a delegation: the role (writer, the only one) and
// when it ends (none: until revoked).
type delegateRequest struct {
	Role      graph.Role `json:"role"`
	ExpiresAt *time.Time `json:"expires_at"`
}

func (a *api) delegate(c echo.Context) error {
	var req delegateRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if req.Role != graph.RoleWriter {
		return graph.Errorf(graph.EINVALID, "role must be writer")
	}
	if err := a.svc.Delegate(c.Request().Context(), callOf(c), c.Param("id"), c.Param("principal"), req.Role, req.ExpiresAt); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (a *api) undelegate(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return decodeError(err) // the body limit
	}
	if len(bytes.TrimSpace(body)) > 0 {
		return graph.Errorf(graph.EINVALID, "revoking a delegation takes no body")
	}
	if err := a.svc.Delegate(c.Request().Context(), callOf(c), c.Param("id"), c.Param("principal"), "", nil); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

type teamRequest struct {
	Name    string `json:"name"`
	OwnerID string `json:"owner_id"`
}

func (a *api) createTeam(c echo.Context) error {
	var req teamRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if err := a.svc.CreateTeam(c.Request().Context(), callOf(c), req.Name, req.OwnerID); err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"name": req.Name, "group_id": callOf(c).P.Org.Team(req.Name).GroupID()})
}

func (a *api) getTeam(c echo.Context) error {
	t, err := a.svc.GetTeam(c.Request().Context(), callOf(c), c.Param("team"))
	if err != nil {
		return err
	}
	out := map[string]any{"name": t.Name, "group_id": callOf(c).P.Org.Team(t.Name).GroupID(),
		"created_at": t.CreatedAt, "owner_id": t.OwnerID, "members": t.Members}
	if t.Types != nil {
		out["types"] = spaceTypesOf(t.Types)
	}
	return c.JSON(http.StatusOK, out)
}

// dissolveTeam deletes a team, or with ?dry_run=true says what that would move.
func (a *api) dissolveTeam(c echo.Context) error {
	dryRun := false
	switch c.QueryParam("dry_run") {
	case "", "false":
	case "true":
		dryRun = true
	default:
		return graph.Errorf(graph.EINVALID, "dry_run must be true or false")
	}
	d, err := a.svc.DissolveTeam(c.Request().Context(), callOf(c), c.Param("team"), dryRun)
	if err != nil {
		return err
	}
	type creator struct {
		AgentID  string `json:"agent_id"`
		Memories int    `json:"memories"`
	}
	out := struct {
		Team     string    `json:"team"`
		DryRun   bool      `json:"dry_run"`
		Moved    int       `json:"moved"`
		Erased   int       `json:"erased"`
		Creators []creator `json:"creators"`
	}{Team: c.Param("team"), DryRun: dryRun, Erased: d.Erased, Creators: []creator{}}
	for _, agent := range slices.Sorted(maps.Keys(d.Moved)) {
		out.Moved += d.Moved[agent]
		out.Creators = append(out.Creators, creator{agent, d.Moved[agent]})
	}
	return c.JSON(http.StatusOK, out)
}

type memberRequest struct {
	Role graph.Role `json:"role"`
}

func (a *api) setMember(c echo.Context) error {
	var req memberRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if req.Role == "" {
		return graph.Errorf(graph.EINVALID, "role must be reader or writer")
	}
	if err := a.svc.SetMember(c.Request().Context(), callOf(c), c.Param("team"), c.Param("principal"), req.Role); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (a *api) removeMember(c echo.Context) error {
	if err := a.svc.SetMember(c.Request().Context(), callOf(c), c.Param("team"), c.Param("principal"), ""); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (a *api) setPromoter(grant bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := a.svc.SetPromoter(c.Request().Context(), callOf(c), c.Param("principal"), grant); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

func (a *api) listAudit(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	since, err := queryTime(c, "since")
	if err != nil {
		return err
	}
	until, err := queryTime(c, "until")
	if err != nil {
		return err
	}
	f := graph.AuditFilter{Subject: c.QueryParam("subject"), Actor: c.QueryParam("actor"), Kind: c.QueryParam("kind"),
		Since: since, Until: until, Page: pr}
	events, next, err := a.svc.ListAudit(c.Request().Context(), callOf(c), f)
	if err != nil {
		return err
	}
	if events == nil {
		events = []*graph.AuditEvent{}
	}
	return c.JSON(http.StatusOK, map[string]any{"events": events, "next_cursor": next, "has_more": next != ""})
}
