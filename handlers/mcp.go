package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/service"
)

// The MCP tools: the memory API for agents that speak the Model Context Protocol,
// served at /mcp (streamable HTTP) behind the same host keys, X-Requester-Id and
// X-Requester-Teams as REST, through the same service and Authorizer. Writes over MCP
// are confined (docs/concepts.md): a memory meant for a space the requester cannot
// write lands in the agent's private space, whatever the host key's trust.

type mcpAdd struct {
	AgentID        string     `json:"agent_id" jsonschema:"the agent whose memory this is"`
	Content        string     `json:"content" jsonschema:"what to remember: a conversation line or a note, in plain text"`
	Visibility     string     `json:"visibility,omitempty" jsonschema:"private (the default: only the agent's owner reads it), public, team, or shared (every agent of the same owner reads it)"`
	Team           string     `json:"team,omitempty" jsonschema:"the team, with visibility team"`
	ReferenceTime  *time.Time `json:"reference_time,omitempty" jsonschema:"when it was said or happened (RFC 3339); default now"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty" jsonschema:"when to forget it (RFC 3339): from then on it is gone from every read and later erased"`
	IdempotencyKey string     `json:"idempotency_key,omitempty" jsonschema:"a key of your choosing that makes a retried call store the memory once"`
	Extract        *bool      `json:"extract,omitempty" jsonschema:"false: store it as given, searchable, without extracting entities and facts from it (no model call); default true"`
	// ExtractionInstructions: extraction_instructions of a REST write.
	ExtractionInstructions string `json:"extraction_instructions,omitempty" jsonschema:"instructions to the model for extracting this memory alone (at most 2000 characters)"`
}

type mcpSearch struct {
	AgentID        string     `json:"agent_id" jsonschema:"the agent whose memory to search"`
	Query          string     `json:"query,omitempty" jsonschema:"what to look for, in plain words"`
	Limit          int        `json:"limit,omitempty" jsonschema:"results per kind"`
	Scopes         []string   `json:"scopes,omitempty" jsonschema:"team:NAME or global, to search those spaces too"`
	Include        []string   `json:"include,omitempty" jsonschema:"facts, entities and/or episodes (default all)"`
	CenterEntityID string     `json:"center_entity_id,omitempty" jsonschema:"an entity id: search around it, nearest first"`
	AsOf           *time.Time `json:"as_of,omitempty" jsonschema:"the facts that held at this time (RFC 3339), and the memories said by then"`
	IncludeExpired bool       `json:"include_expired,omitempty" jsonschema:"also facts that no longer hold"`
	mcpTypes
}

type mcpID struct {
	ID string `json:"id" jsonschema:"the memory id, as add_memory or search_memory gave it"`
}

type mcpUpdate struct {
	ID         string     `json:"id" jsonschema:"the memory id"`
	Content    *string    `json:"content,omitempty" jsonschema:"the new text; its facts are extracted again and those only the old text stated end"`
	Tags       *[]string  `json:"tags,omitempty" jsonschema:"the new tags"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty" jsonschema:"when to forget it (RFC 3339)"`
	Visibility *string    `json:"visibility,omitempty" jsonschema:"move it: private, public, shared, or team with team (only for the agent that wrote it)"`
	Team       string     `json:"team,omitempty" jsonschema:"the team, with visibility team"`
	IfVersion  int        `json:"if_version,omitempty" jsonschema:"the version you read: the update applies only while it is current"`
}

type mcpList struct {
	AgentID string `json:"agent_id" jsonschema:"the agent whose memories to list"`
	Space   string `json:"space,omitempty" jsonschema:"private, public, team:NAME, shared or global (default: every space of the agent the requester sees)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"memories per page"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

// mcpStatus is what get_status answers: where a memory is in ingestion.
type mcpStatus struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	Attempts  int    `json:"attempts"`
	LastError string `json:"last_error,omitempty"`
}

// newMCP builds the MCP server with memgate's tools.
func newMCP(svc *service.Service, version string, tp trace.TracerProvider) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "memgate", Version: version}, nil)
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	t := mcpTools{svc: svc, tracer: tp.Tracer("github.com/memgate/memgate/handlers")}
	addTool(s, &mcp.Tool{Name: "add_memory", Description: "Remember something for an agent. It is stored at once " +
		"(status queued) and turned into entities and facts in the background; get_status tells when it is done."}, t, t.add)
	addTool(s, &mcp.Tool{Name: "add_fact", Description: "Remember a fact directly, without extraction: source RELATION " +
		"target (e.g. Alice WORKS_AT Acme), with since when it holds. It is added as an extracted fact is (entities " +
		"matched in the agent's space, a contradicted fact ended) and answered once added."}, t, t.addFact)
	addTool(s, &mcp.Tool{Name: "search_memory", Description: "Search an agent's memory: facts (current ones unless " +
		"as_of or include_expired), entities and the memories they came from, best first."}, t, t.search)
	addTool(s, &mcp.Tool{Name: "get_context", Description: "The memory that bears on an agent's next turn, as plain " +
		"text for its prompt: the facts that hold (with since when), short summaries of the entities they name, and " +
		"the most relevant memories, within max_tokens. Give the recent conversation (messages) or a query."}, t, t.context)
	addTool(s, &mcp.Tool{Name: "get_memory", Description: "Read one memory by id."}, t, t.get)
	addTool(s, &mcp.Tool{Name: "list_memories", Description: "List an agent's memories, newest first, a page at a time."}, t, t.list)
	addTool(s, &mcp.Tool{Name: "update_memory", Description: "Change a memory in place (its text, tags, expiry, or " +
		"space); the version it replaces is kept. Answers the memory with its new version."}, t, t.update)
	addTool(s, &mcp.Tool{Name: "delete_memory", Description: "Delete one memory and the facts only it supports."}, t, t.delete)
	addTool(s, &mcp.Tool{Name: "get_status", Description: "Where a memory is in ingestion: queued, processing, done " +
		"or failed (with the reason)."}, t, t.status)
	addTool(s, &mcp.Tool{Name: "compact_memories", Description: "Summarize an agent's memories (those named, or since a " +
		"time) within max_tokens and keep the summary as a memory of its private space: for an agent whose context is " +
		"near its limit. Answers the new memory; its content is the summary."}, t, t.compact)
	addTool(s, &mcp.Tool{Name: "reflect", Description: "Distill what an agent wrote recently (since a time, by default " +
		"the last day) and the facts it knows into a summary and a few rules kept as memories of its private space. " +
		"Only its owner may."}, t, t.reflect)
	addTool(s, &mcp.Tool{Name: "list_entities", Description: "List the entities (people, organizations, places, ...) " +
		"of an agent's spaces the requester sees, by name, a page at a time; filter by type and the start of the name."}, t, t.entities)
	addTool(s, &mcp.Tool{Name: "list_conflicts", Description: "List the contradictions held for review in an agent's " +
		"spaces (memory.conflicts: review): each pair of facts that cannot both hold, both still current."}, t, t.conflicts)
	addTool(s, &mcp.Tool{Name: "resolve_conflict", Description: "Resolve a contradiction held for review: keep the old " +
		"fact, the new one, or both. Needs the right to change the conflict's space."}, t, t.resolve)
	// Stateless, answering JSON: no session lives in one memgate process, so any
	// instance behind a load balancer answers any call.
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

type mcpTools struct {
	svc    *service.Service
	tracer trace.Tracer
}

// mcpCallKey holds, in an MCP request's context, the requester the /mcp route
// resolved for it (authenticate, confineHost, requester): every tool call of the
// request acts for it.
type mcpCallKey struct{}

// call is the requester of one tool call.
func (t mcpTools) call(ctx context.Context) (service.Call, error) {
	c, ok := ctx.Value(mcpCallKey{}).(service.Call)
	if !ok {
		return service.Call{}, graph.Errorf(graph.EINTERNAL, "an MCP call reached its tool without a requester")
	}
	return c, nil
}

// addTool registers a use case as an MCP tool. Its input schema is derived from In
// and published, but the arguments are decoded here as REST decodes a body (unknown
// fields refused, types checked, messages that never echo the input), not by the
// SDK, so a mistake gets the error body REST gives for it. The requester is resolved
// first, as REST's middleware does.
func addTool[In any](s *mcp.Server, tl *mcp.Tool, t mcpTools, do func(context.Context, service.Call, In) (any, error)) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("the input schema of MCP tool %s: %v", tl.Name, err))
	}
	tl.InputSchema = schema
	s.AddTool(tl, func(ctx context.Context, req *mcp.CallToolRequest) (_ *mcp.CallToolResult, err error) {
		// A tool call is a span in its request's: its name, and on failure the error
		// code; never its arguments.
		ctx, span := t.tracer.Start(ctx, "tools/call "+tl.Name, trace.WithAttributes(
			attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", tl.Name)))
		defer func() {
			if err != nil {
				span.SetStatus(codes.Error, "")
			}
			span.End()
		}()
		c, err := t.call(ctx)
		if err != nil {
			return result(req, nil, err)
		}
		var in In
		if args := bytes.TrimSpace(req.Params.Arguments); len(args) > 0 && !bytes.Equal(args, []byte("null")) {
			if err := decodeJSON(bytes.NewReader(args), &in); err != nil {
				return result(req, nil, err)
			}
		}
		v, err := do(ctx, c, in)
		if err != nil && span.IsRecording() {
			code := graph.ErrorCode(err)
			span.SetAttributes(attribute.String("error.type", code))
			span.SetStatus(codes.Error, code)
		}
		return result(req, v, err)
	})
}

// result answers a tool call: the value as JSON text and structured content, or an
// MCP tool error whose text is the REST error body (code, message, request id).
func result(req *mcp.CallToolRequest, v any, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		_, code, message := classify(err)
		requestID := ""
		if req.Extra != nil {
			requestID = req.Extra.Header.Get("X-Request-Id")
		}
		b, err := json.Marshal(ErrorBody{Error: ErrorDetail{Code: code, Message: message, RequestID: requestID}})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}

func (t mcpTools) add(ctx context.Context, c service.Call, in mcpAdd) (any, error) {
	added, errs := t.svc.Add(ctx, c, []service.NewMemory{{AgentID: in.AgentID, Text: in.Content, Visibility: in.Visibility,
		Team: in.Team, ReferenceTime: in.ReferenceTime, ExpiresAt: in.ExpiresAt, Source: graph.SourceText, SourceDescription: "mcp",
		NoExtraction: in.Extract != nil && !*in.Extract, ExtractionInstructions: in.ExtractionInstructions}}, in.IdempotencyKey)
	if errs[0] != nil {
		return nil, errs[0]
	}
	return acceptedOf(added[0]), nil
}

// mcpTypes are the type and attribute filters of search_memory and get_context.
type mcpTypes struct {
	EntityTypes    []string       `json:"entity_types,omitempty" jsonschema:"only entities of these types, and facts with an end of one (the deployment's entity types)"`
	EdgeTypes      []string       `json:"edge_types,omitempty" jsonschema:"only facts of these edge types (the deployment's edge types)"`
	Attributes     map[string]any `json:"attributes,omitempty" jsonschema:"only entities whose attributes have these values, and facts with an end that has them (name: value)"`
	EdgeAttributes map[string]any `json:"edge_attributes,omitempty" jsonschema:"only facts whose edge attributes have these values (name: value)"`
}

func (m mcpTypes) query() graph.TypeQuery {
	return graph.TypeQuery{EntityTypes: m.EntityTypes, EdgeTypes: m.EdgeTypes, Attributes: m.Attributes, EdgeAttributes: m.EdgeAttributes}
}

func (t mcpTools) search(ctx context.Context, c service.Call, in mcpSearch) (any, error) {
	res, err := t.svc.Search(ctx, c, service.SearchQuery{Query: in.Query, AgentID: in.AgentID, Limit: in.Limit,
		Scopes: in.Scopes, Include: in.Include, Center: in.CenterEntityID,
		Filter: graph.SearchFilter{AsOf: in.AsOf, IncludeExpired: in.IncludeExpired}, Types: in.query()})
	if err != nil {
		return nil, err
	}
	return searchResponseOf(res), nil
}

func (t mcpTools) get(ctx context.Context, c service.Call, in mcpID) (any, error) {
	e, err := t.svc.Get(ctx, c, in.ID)
	if err != nil {
		return nil, err
	}
	return viewOf(e), nil
}

func (t mcpTools) status(ctx context.Context, c service.Call, in mcpID) (any, error) {
	e, err := t.svc.Get(ctx, c, in.ID)
	if err != nil {
		return nil, err
	}
	return mcpStatus{ID: e.UUID, Status: e.Status, Attempts: e.Attempts, LastError: e.LastError}, nil
}

func (t mcpTools) list(ctx context.Context, c service.Call, in mcpList) (any, error) {
	page, err := t.svc.List(ctx, c, service.ListQuery{AgentID: in.AgentID, Space: in.Space,
		Page: graph.PageRequest{Cursor: in.Cursor, Limit: in.Limit}})
	if err != nil {
		return nil, err
	}
	return listResponseOf(page), nil
}

func (t mcpTools) update(ctx context.Context, c service.Call, in mcpUpdate) (any, error) {
	p := service.Patch{Given: map[string]bool{}}
	if in.IfVersion != 0 {
		p.IfMatch = strconv.Itoa(in.IfVersion)
	}
	if in.Content != nil {
		p.Given["messages"], p.Memory.Text = true, *in.Content
	}
	if in.Tags != nil {
		p.Given["tags"], p.Memory.Tags = true, *in.Tags
	}
	if in.ExpiresAt != nil {
		p.Given["expires_at"], p.Memory.ExpiresAt = true, in.ExpiresAt
	}
	if in.Visibility != nil {
		p.Given["visibility"], p.Memory.Visibility = true, *in.Visibility
	}
	if in.Team != "" {
		p.Given["team"], p.Memory.Team = true, in.Team
	}
	e, err := t.svc.Update(ctx, c, in.ID, p)
	if err != nil {
		return nil, err
	}
	return viewOf(e), nil
}

func (t mcpTools) delete(ctx context.Context, c service.Call, in mcpID) (any, error) {
	if err := t.svc.Delete(ctx, c, in.ID); err != nil {
		return nil, err
	}
	return map[string]any{"id": in.ID, "deleted": true}, nil
}
