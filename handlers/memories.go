package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/service"
)

// memoryRequest is the body of POST /v1/memories. messages is a string or a list of
// {role, content, name?, timestamp?}.
type memoryRequest struct {
	AgentID           string          `json:"agent_id"`
	Messages          json.RawMessage `json:"messages"`
	Visibility        string          `json:"visibility"`
	Team              string          `json:"team"`
	Metadata          map[string]any  `json:"metadata"`
	ReferenceTime     *time.Time      `json:"reference_time"`
	Source            string          `json:"source"`
	SourceDescription string          `json:"source_description"`
	Tags              []string        `json:"tags"`
	Priority          string          `json:"priority"`
	ExpiresAt         *time.Time      `json:"expires_at"`
	Confidence        *float64        `json:"confidence"`
	Extract           *bool           `json:"extract"`
	// ExtractionInstructions are passed to the model for this memory only.
	ExtractionInstructions string `json:"extraction_instructions"`
}

type messageRequest struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	Name      string     `json:"name"`
	Timestamp *time.Time `json:"timestamp"`
}

func (r *memoryRequest) toNew() (service.NewMemory, error) {
	m := service.NewMemory{
		AgentID: r.AgentID, Visibility: r.Visibility, Team: r.Team, Metadata: r.Metadata,
		ReferenceTime: r.ReferenceTime, Source: r.Source, SourceDescription: r.SourceDescription,
		Tags: r.Tags, Priority: r.Priority, ExpiresAt: r.ExpiresAt, Confidence: r.Confidence,
		NoExtraction: r.Extract != nil && !*r.Extract, ExtractionInstructions: r.ExtractionInstructions,
	}
	err := parseMessages(r.Messages, &m)
	return m, err
}

// parseMessages sets m's Text or Messages from the messages field: a string or a list
// of {role, content, name?, timestamp?}.
func parseMessages(field json.RawMessage, m *service.NewMemory) error {
	raw := bytes.TrimSpace(field)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		return graph.Errorf(graph.EINVALID, "messages is required: a string or a list of {role, content}")
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &m.Text); err != nil {
			return graph.Errorf(graph.EINVALID, "messages is not a valid string")
		}
	case raw[0] == '[':
		var msgs []messageRequest
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&msgs); err != nil {
			return graph.Errorf(graph.EINVALID, "messages must be a list of {role, content, name?, timestamp?}")
		}
		m.Messages = make([]graph.Message, len(msgs))
		for i, msg := range msgs {
			m.Messages[i] = graph.Message{Role: msg.Role, Content: msg.Content, Name: msg.Name, Timestamp: msg.Timestamp}
		}
	default:
		return graph.Errorf(graph.EINVALID, "messages must be a string or a list of {role, content}")
	}
	return nil
}

// memoryView is a memory as the API shows it.
type memoryView struct {
	ID                string          `json:"id"`
	AgentID           string          `json:"agent_id"`
	GroupID           string          `json:"group_id"`
	Space             string          `json:"space"`
	Status            string          `json:"status"`
	Attempts          int             `json:"attempts"`
	LastError         string          `json:"last_error,omitempty"`
	Source            string          `json:"source"`
	SourceDescription string          `json:"source_description,omitempty"`
	Content           string          `json:"content"`
	Messages          []graph.Message `json:"messages,omitempty"`
	Metadata          map[string]any  `json:"metadata,omitempty"`
	Tags              []string        `json:"tags,omitempty"`
	Priority          string          `json:"priority,omitempty"`
	Confidence        *float64        `json:"confidence,omitempty"`
	ReferenceTime     time.Time       `json:"reference_time"`
	CreatedAt         time.Time       `json:"created_at"`
	ExpiresAt         *time.Time      `json:"expires_at,omitempty"`
	PromotedFrom      string          `json:"promoted_from,omitempty"`
	PromotedBy        string          `json:"promoted_by,omitempty"`
	PromotedAt        *time.Time      `json:"promoted_at,omitempty"`
	DerivedFrom       []string        `json:"derived_from,omitempty"`
	VisibilityRule    string          `json:"visibility_rule,omitempty"`
	WrittenBy         string          `json:"written_by,omitempty"` // the requester who wrote it (the owner, or a delegate): for who may change it, or was it
	Version           int             `json:"version"`
	UpdatedAt         *time.Time      `json:"updated_at,omitempty"`
	UpdatedBy         string          `json:"updated_by,omitempty"` // who last changed it, shown as written_by is
	Extract           *bool           `json:"extract,omitempty"`    // false when the memory was stored without extraction
	// ExtractionInstructions are what its writer told the model for its extraction.
	ExtractionInstructions string   `json:"extraction_instructions,omitempty"`
	Cost                   costView `json:"cost"` // what extracting it cost so far, every attempt
	Score                  *float64 `json:"score,omitempty"`
}

func viewOf(e *graph.Episode) memoryView {
	return memoryView{
		ID: e.UUID, AgentID: e.AgentID, GroupID: e.GroupID, Space: e.Space().Name(), Status: e.Status,
		Attempts: e.Attempts, LastError: e.LastError, Source: e.Source, SourceDescription: e.SourceDescription,
		Content: e.Content, Messages: e.Messages, Metadata: e.Metadata, Tags: e.Tags, Priority: e.Priority,
		Confidence: e.Confidence, ReferenceTime: e.ValidAt, CreatedAt: e.CreatedAt, ExpiresAt: e.ExpiresAt,
		PromotedFrom: e.PromotedFrom, PromotedBy: e.PromotedBy, PromotedAt: e.PromotedAt, DerivedFrom: e.DerivedFrom,
		VisibilityRule: e.VisibilityRule, WrittenBy: e.RequesterID,
		Version: e.Version, UpdatedAt: e.UpdatedAt, UpdatedBy: e.UpdatedBy, Extract: extractOf(e),
		ExtractionInstructions: e.ExtractionInstructions,
		Cost:                   costViewOf(e.Cost),
	}
}

// extractOf is a memory's extract field: false for one stored without extraction,
// absent otherwise.
func extractOf(e *graph.Episode) *bool {
	if !e.Unextracted {
		return nil
	}
	f := false
	return &f
}

// accepted is the answer to an add: the episode is stored and queued.
type accepted struct {
	ID             string `json:"id"`
	GroupID        string `json:"group_id"`
	Status         string `json:"status"`
	Confined       bool   `json:"confined"`
	VisibilityRule string `json:"visibility_rule,omitempty"`
	Replayed       bool   `json:"replayed,omitempty"`
}

func acceptedOf(a service.Added) accepted {
	return accepted{ID: a.Episode.UUID, GroupID: a.Episode.GroupID, Status: a.Episode.Status, Confined: a.Confined,
		VisibilityRule: a.Episode.VisibilityRule, Replayed: a.Replayed}
}

func (a *api) addMemory(c echo.Context) error {
	var req memoryRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	m, err := req.toNew()
	if err != nil {
		return err
	}
	added, errs := a.svc.Add(c.Request().Context(), callOf(c), []service.NewMemory{m}, c.Request().Header.Get("Idempotency-Key"))
	if errs[0] != nil {
		return errs[0]
	}
	return c.JSON(http.StatusAccepted, acceptedOf(added[0]))
}

type batchRequest struct {
	Items []memoryRequest `json:"items"`
}

type batchItem struct {
	Index int `json:"index"`
	*accepted
	Error *ErrorDetail `json:"error,omitempty"`
}

// addBatch stores many memories, each on its own: the answer lists every item's
// outcome, so a failed item never hides the ones that landed.
func (a *api) addBatch(c echo.Context) error {
	var req batchRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	key := c.Request().Header.Get("Idempotency-Key")
	if err := a.svc.CheckWrite(len(req.Items), key); err != nil {
		return err
	}
	items := make([]service.NewMemory, len(req.Items))
	results := make([]batchItem, len(req.Items))
	var valid []int
	for i := range req.Items {
		results[i].Index = i
		m, err := req.Items[i].toNew()
		if err != nil {
			results[i].Error = a.detail(c, err)
			continue
		}
		items[i] = m
		valid = append(valid, i)
	}
	// Items are added in one call so batch idempotency keys stay per item index.
	added, errs := a.svc.Add(c.Request().Context(), callOf(c), items, key)
	for _, i := range valid {
		if errs[i] != nil {
			results[i].Error = a.detail(c, errs[i])
			continue
		}
		acc := acceptedOf(added[i])
		results[i].accepted = &acc
	}
	return c.JSON(http.StatusOK, map[string]any{"results": results})
}

func (a *api) getMemory(c echo.Context) error {
	e, err := a.svc.Get(c.Request().Context(), callOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return withVersion(c, e)
}

// withVersion answers a memory with its version as the ETag, for If-Match.
func withVersion(c echo.Context, e *graph.Episode) error {
	setETag(c, e)
	return c.JSON(http.StatusOK, viewOf(e))
}

func setETag(c echo.Context, e *graph.Episode) {
	c.Response().Header().Set("ETag", strconv.Quote(strconv.Itoa(e.Version)))
}

// patchRequest is the body of PATCH /v1/memories/{id}: the fields to change; a field
// given as null is cleared.
type patchRequest struct {
	Messages   json.RawMessage `json:"messages"`
	Visibility *string         `json:"visibility"`
	Team       string          `json:"team"`
	Metadata   map[string]any  `json:"metadata"`
	Tags       []string        `json:"tags"`
	Priority   string          `json:"priority"`
	ExpiresAt  *time.Time      `json:"expires_at"`
	Confidence *float64        `json:"confidence"`
}

func (a *api) updateMemory(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return decodeError(err)
	}
	var req patchRequest
	if err := decodeJSON(bytes.NewReader(body), &req); err != nil {
		return err
	}
	var given map[string]json.RawMessage
	if err := json.Unmarshal(body, &given); err != nil {
		return graph.Errorf(graph.EINVALID, "the body must be a JSON object")
	}
	p := service.Patch{Given: map[string]bool{}, IfMatch: ifMatch(c.Request().Header.Get("If-Match")),
		Memory: service.NewMemory{Team: req.Team, Metadata: req.Metadata, Tags: req.Tags, Priority: req.Priority,
			ExpiresAt: req.ExpiresAt, Confidence: req.Confidence}}
	for field := range given {
		p.Given[field] = true
	}
	if p.Given["messages"] {
		if err := parseMessages(req.Messages, &p.Memory); err != nil {
			return err
		}
	}
	if p.Given["visibility"] {
		if req.Visibility == nil {
			return graph.Errorf(graph.EINVALID, "visibility must be private, public, team or shared; it cannot be null")
		}
		p.Memory.Visibility = *req.Visibility
	}
	e, err := a.svc.Update(c.Request().Context(), callOf(c), c.Param("id"), p)
	if err != nil {
		return err
	}
	return withVersion(c, e)
}

// ifMatch is the version an If-Match header names: the entity tag without its quotes
// (and weak marker), or * for any.
func ifMatch(h string) string {
	h = strings.TrimPrefix(strings.TrimSpace(h), "W/")
	if unquoted, err := strconv.Unquote(h); err == nil {
		return unquoted
	}
	return h
}

// versionView is a memory as an update found it.
type versionView struct {
	memoryView
	ReplacedAt time.Time `json:"replaced_at"`
	ReplacedBy string    `json:"replaced_by"`
}

func (a *api) memoryVersions(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	e, page, err := a.svc.Versions(c.Request().Context(), callOf(c), c.Param("id"),
		pr)
	if err != nil {
		return err
	}
	out := struct {
		Current    memoryView    `json:"current"`
		Versions   []versionView `json:"versions"`
		NextCursor string        `json:"next_cursor,omitempty"`
		HasMore    bool          `json:"has_more"`
	}{Current: viewOf(e), Versions: []versionView{}, NextCursor: page.NextCursor, HasMore: page.HasMore}
	for _, v := range page.Versions {
		out.Versions = append(out.Versions, versionView{memoryView: viewOf(v.Memory), ReplacedAt: v.ReplacedAt, ReplacedBy: v.ReplacedBy})
	}
	setETag(c, e)
	return c.JSON(http.StatusOK, out)
}

type listResponse struct {
	Items      []memoryView `json:"items"`
	NextCursor string       `json:"next_cursor,omitempty"`
	HasMore    bool         `json:"has_more"`
}

func (a *api) listMemories(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	page, err := a.svc.List(c.Request().Context(), callOf(c), service.ListQuery{
		AgentID: c.QueryParam("agent_id"), Space: c.QueryParam("space"),
		Page: pr,
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, listResponseOf(page))
}

func listResponseOf(page graph.EpisodePage) listResponse {
	out := listResponse{Items: []memoryView{}, NextCursor: page.NextCursor, HasMore: page.HasMore}
	for _, e := range page.Episodes {
		out.Items = append(out.Items, viewOf(e))
	}
	return out
}

func (a *api) deleteMemory(c echo.Context) error {
	if err := a.svc.Delete(c.Request().Context(), callOf(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

type promoteRequest struct {
	Target string `json:"target"`
}

func (a *api) promoteMemory(c echo.Context) error {
	var req promoteRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	e, err := a.svc.Promote(c.Request().Context(), callOf(c), c.Param("id"), req.Target)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, viewOf(e))
}

func (a *api) retryMemory(c echo.Context) error {
	e, err := a.svc.Retry(c.Request().Context(), callOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, viewOf(e))
}

// pageOf is the page a list request asks for: its cursor and limit (0: the default).
func pageOf(c echo.Context) (graph.PageRequest, error) {
	pr := graph.PageRequest{Cursor: c.QueryParam("cursor")}
	if s := c.QueryParam("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return pr, graph.Errorf(graph.EINVALID, "limit must be a whole number")
		}
		pr.Limit = n
	}
	return pr, nil
}

func queryTime(c echo.Context, name string) (*time.Time, error) {
	s := c.QueryParam(name)
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, graph.Errorf(graph.EINVALID, "%s must be an RFC 3339 time", name)
	}
	return &t, nil
}

type compactRequest struct {
	AgentID    string     `json:"agent_id" jsonschema:"the agent whose memories to compact"`
	EpisodeIDs []string   `json:"episode_ids,omitempty" jsonschema:"the memories to compact (at most 100); or since"`
	Since      *time.Time `json:"since,omitempty" jsonschema:"compact what the agent wrote since then (the newest 100); or episode_ids"`
	MaxTokens  int        `json:"max_tokens,omitempty" jsonschema:"the summary's budget, 16 to 8192 (default 1000); it is at most as many bytes"`
}

func (r compactRequest) query() service.CompactQuery {
	return service.CompactQuery{AgentID: r.AgentID, EpisodeIDs: r.EpisodeIDs, Since: r.Since, MaxTokens: r.MaxTokens}
}

func (a *api) compactMemories(c echo.Context) error {
	var req compactRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	e, err := a.svc.Compact(c.Request().Context(), callOf(c), req.query())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, viewOf(e))
}

func (t mcpTools) compact(ctx context.Context, c service.Call, in compactRequest) (any, error) {
	e, err := t.svc.Compact(ctx, c, in.query())
	if err != nil {
		return nil, err
	}
	return viewOf(e), nil
}

type reflectRequest struct {
	Since     *time.Time `json:"since,omitempty"`
	MaxTokens int        `json:"max_tokens,omitempty"`
}

type reflected struct {
	Memories []memoryView `json:"memories"` // the summary first, then the rules
}

func reflectedOf(eps []*graph.Episode) reflected {
	out := reflected{Memories: []memoryView{}}
	for _, e := range eps {
		out.Memories = append(out.Memories, viewOf(e))
	}
	return out
}

func (a *api) reflectAgent(c echo.Context) error {
	var req reflectRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	eps, err := a.svc.Reflect(c.Request().Context(), callOf(c), service.ReflectQuery{AgentID: c.Param("id"), Since: req.Since,
		MaxTokens: req.MaxTokens})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, reflectedOf(eps))
}

type mcpReflect struct {
	AgentID   string     `json:"agent_id" jsonschema:"the agent to reflect on"`
	Since     *time.Time `json:"since,omitempty" jsonschema:"reflect on what the agent wrote since then (default: the last day)"`
	MaxTokens int        `json:"max_tokens,omitempty" jsonschema:"the budget of the summary and rules together, 16 to 8192 (default 1000)"`
}

func (t mcpTools) reflect(ctx context.Context, c service.Call, in mcpReflect) (any, error) {
	eps, err := t.svc.Reflect(ctx, c, service.ReflectQuery{AgentID: in.AgentID, Since: in.Since, MaxTokens: in.MaxTokens})
	if err != nil {
		return nil, err
	}
	return reflectedOf(eps), nil
}
