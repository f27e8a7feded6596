// Package service holds memgate's use cases: every memory, agent and team operation,
// authorized once by the Authorizer, audited, and stored through graph's interfaces.
// REST handlers and MCP tools both call it, so they cannot disagree.
package service

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// Limits are the configurable bounds of requests.
type Limits struct {
	DefaultVisibility string // private or public
	RefuseCredentials bool
	MaxContentBytes   int
	BatchMaxItems     int // memories in one write at most (CheckWrite); 0: no bound
	PageSizeDefault   int
	PageSizeMax       int
	// MaxVersions is how many earlier versions of a memory are kept (0: 20).
	MaxVersions int
	// PublicWritesPerDay caps each agent's public writes per UTC day; 0: no cap.
	PublicWritesPerDay int
	// VisibilityRules narrow public and team writes whose content matches to the
	// agent's private space, first match wins.
	VisibilityRules []VisibilityRule
}

// VisibilityRule is a content rule of memory.visibility_rules.
type VisibilityRule struct {
	Name    string
	Pattern *regexp.Regexp
}

// Service is the application layer.
type Service struct {
	Auth  access.Authorizer
	Dir   graph.Directory
	Mem   graph.Memories
	Find  graph.Searcher
	Queue graph.Queue
	// Ontology is the deployment's entity and edge types (ingest.entity_types,
	// ingest.edge_types), which a space's owner may narrow (SetAgentTypes).
	Ontology graph.Ontology
	// Embedder embeds search queries; nil leaves vector search out.
	Embedder Embedder
	// Summarizer writes compactions.
	Summarizer Summarizer
	// Tokens counts a context block's tokens; nil: DefaultTokenizer.
	Tokens *Tokenizer
	// OnDeny, when set, hears of every refusal (for metrics): the request's context,
	// the audit event's kind and the group_id refused ("" when the refusal is not about
	// a space).
	OnDeny func(ctx context.Context, kind, groupID string)
	Audit  graph.AuditLog
	// Hooks stores webhooks and their outbox; nil: the webhook routes answer 503.
	Hooks graph.Webhooks
	// Hosts finds the host keys audit webhooks were registered with.
	Hosts Hosts
	// CheckWebhookURL refuses a webhook URL whose host resolves to an address it may
	// not reach (SSRF, webhook.Guard); nil accepts any.
	CheckWebhookURL func(ctx context.Context, url string) error
	Limits          Limits
	Log             *slog.Logger
	Now             func() time.Time
	// Tracer makes a span of every use case (trace.go); nil: tracing is off.
	Tracer trace.TracerProvider
}

// Call is one request: the resolved principal and the request id audit events carry.
type Call struct {
	P         access.Principal
	RequestID string
	// ResolvedAt is when P was read. A write holds the agent or team whose space it
	// goes to only if that agent or team existed then: one created since (after an
	// erasure or a dissolution, with the same id) is not the one P was judged against.
	ResolvedAt time.Time
}

// Resolve builds the principal of requester once per request, in the organization
// of its host, or in org when the request names one (X-Requester-Org: a platform host
// may name any, another host only its own; naming another is refused, audited in the
// host's own). asserted are the team memberships the host asserts for this request
// alone (X-Requester-Teams, parsed by access.ParseAssertedTeams; nil for none): they
// count in addition to the stored ones, checked in the same query as the rest. A host
// that may not assert them, or a team that does not exist in the organization, is
// refused with one audited 403. An error while resolving denies the request
// (EUNAVAILABLE), never lets it through.
func (s *Service) Resolve(ctx context.Context, host access.Host, org, requester string, asserted map[string]graph.Role, requestID string) (_ Call, err error) {
	ctx, end := s.span(ctx, "Resolve", Call{RequestID: requestID})
	defer func() { end(err) }()
	if requester == "" {
		requester = host.Subject // a JWT names its requester
	}
	if err := graph.CheckID("X-Requester-Id", requester); err != nil {
		return Call{}, err
	}
	at := s.Now().UTC()
	inOrg, err := host.InOrg(org)
	if graph.ErrorCode(err) == graph.EFORBIDDEN {
		c := Call{P: access.Principal{Org: host.Org, ID: requester, Host: host, Asserted: asserted}, RequestID: requestID}
		return Call{}, s.denyAs(ctx, c, graph.AuditRequesterDenied, "", "", graph.ErrorMessage(err))
	}
	if err != nil {
		return Call{}, err
	}
	host = inOrg
	refused := Call{P: access.Principal{Org: host.Org, ID: requester, Host: host, Asserted: asserted}, RequestID: requestID}
	if !host.MayName(requester) {
		return Call{}, s.denyAs(ctx, refused, graph.AuditRequesterDenied, "", "", "this host may not act for requester "+requester)
	}
	facts, err := s.Dir.ResolvePrincipal(ctx, host.Org, requester, slices.Sorted(maps.Keys(asserted))...)
	if err != nil {
		if graph.ErrorCode(err) == graph.EINTERNAL {
			err = graph.Wrap(graph.EUNAVAILABLE, err, "could not resolve the requester; retry later")
		}
		return Call{}, err
	}
	p, err := access.NewPrincipal(requester, host, facts).Assert(asserted, facts.Asserted)
	if err != nil {
		return Call{}, s.deny(ctx, refused, "", "", err.Error())
	}
	return Call{P: p, RequestID: requestID, ResolvedAt: at}, nil
}

// event builds an audit event of c's.
func (s *Service) event(c Call, kind, subject, space, reason string) *graph.AuditEvent {
	return &graph.AuditEvent{
		Org: c.P.Org, ID: uuid.NewString(), Kind: kind, At: s.Now().UTC(), Actor: c.P.ID, Subject: subject,
		HostKey: c.P.Host.Name, Space: space, Reason: reason, RequestID: c.RequestID,
		AssertedTeams: access.FormatAssertedTeams(c.P.Asserted),
	}
}

// deny records a namespace_denied event in its own transaction and returns the 403;
// denyAs, an event of another kind of denial (requester_denied).
// When the event cannot be stored the request fails with EUNAVAILABLE instead: no
// refusal goes unrecorded.
func (s *Service) deny(ctx context.Context, c Call, subject, space, reason string) error {
	return s.denyAs(ctx, c, graph.AuditNamespaceDenied, subject, space, reason)
}

func (s *Service) denyAs(ctx context.Context, c Call, kind, subject, space, reason string) error {
	if s.OnDeny != nil {
		s.OnDeny(ctx, kind, space)
	}
	if err := s.Audit.RecordAudit(ctx, s.event(c, kind, subject, space, reason)); err != nil {
		return graph.Wrap(graph.EUNAVAILABLE, err, "the request was refused but the refusal could not be recorded; retry later")
	}
	return graph.Errorf(graph.EFORBIDDEN, "%s", reason)
}

// forbidden is the error an authorize callback returns inside a store transaction;
// the caller records it with deny once the transaction has rolled back.
type forbidden struct{ subject, space, reason string }

func (f *forbidden) Error() string { return f.reason }

func forbid(subject, space, reason string) error {
	return &graph.Error{Code: graph.EFORBIDDEN, Message: reason, Err: &forbidden{subject, space, reason}}
}

// recordIfForbidden turns a forbidden error from a transaction into an audited 403.
func (s *Service) recordIfForbidden(ctx context.Context, c Call, err error) error {
	var f *forbidden
	if errors.As(err, &f) {
		return s.deny(ctx, c, f.subject, f.space, f.reason)
	}
	return err
}

func (s *Service) pageSize(limit int) (int, error) {
	switch {
	case limit < 0:
		return 0, graph.Errorf(graph.EINVALID, "limit must not be negative")
	case limit == 0:
		return s.Limits.PageSizeDefault, nil
	case limit > s.Limits.PageSizeMax:
		return s.Limits.PageSizeMax, nil // documented: clamped to the maximum
	}
	return limit, nil
}
