package graph

import (
	"context"
	"time"
)

// Episode statuses: an episode is durable from queued on; the pipeline moves it on.
const (
	StatusQueued     = "queued"
	StatusProcessing = "processing"
	StatusDone       = "done"
	StatusFailed     = "failed"
)

// Episode sources, as Graphiti names them.
const (
	SourceMessage = "message"
	SourceText    = "text"
	SourceJSON    = "json"
)

// Message is one turn of a conversation episode.
type Message struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	Name      string     `json:"name,omitempty"`
	Timestamp *time.Time `json:"timestamp,omitempty"`
}

// Episode is one ingested unit: the immutable raw record an agent posted, stored as a
// Graphiti :Episodic node in exactly one space.
type Episode struct {
	UUID              string
	Name              string
	GroupID           string
	AgentID           string
	Source            string
	SourceDescription string
	Content           string    // the text, or the messages rendered one per line
	Messages          []Message // the messages as posted, for message episodes
	CreatedAt         time.Time // system time
	ValidAt           time.Time // reference time: when it happened in the world
	Status            string
	Attempts          int
	LastError         string
	RequesterID       string
	HostKey           string
	Metadata          map[string]any
	Tags              []string
	Priority          string
	ExpiresAt         *time.Time
	Confidence        *float64
	ContentHash       string
	PromotedFrom      string
	PromotedFromGroup string   // the original's group_id: who cannot see it is not shown PromotedFrom
	DerivedFrom       []string // a compaction's or reflection's: the memories it was written from
	PromotedBy        string
	PromotedAt        *time.Time
	VisibilityRule    string // the memory.visibility_rules rule that narrowed its space, if one did
	// ExtractionInstructions are its writer's words to the model for its extraction
	// alone (at most MaxExtractionInstructions characters).
	ExtractionInstructions string
	// ContentAgent is the agent whose owner wrote the current content: AgentID when the
	// memory is written, kept by an update from that agent's owner, "" on a promoted
	// copy (it belongs to its promoter), after an update by anyone else, and once the
	// agent is erased. Only content with a ContentAgent ever moves into that agent's
	// spaces (a move, a team's dissolution).
	ContentAgent string
	Version      int // 1 when written; each update adds one
	UpdatedAt    *time.Time
	UpdatedBy    string
	// Unextracted: stored as it was given, searchable as a memory, never sent to the
	// pipeline (done at once, whatever later changes its content or its space).
	Unextracted bool
	// FactIDs are the facts the pipeline saved for it (Graphiti's entity_edges); read
	// only.
	FactIDs []string
	// Cost is what extracting it has cost so far; read only: only the queue's writes
	// of an attempt's outcome add to it (Queue.Complete, Release, Return).
	Cost Cost
	// Embedding is its content's vector when the write itself embeds it (a memory
	// stored without extraction, which no extraction will embed); write only.
	Embedding []float32

	// PublicQuota, above 0, is how many public writes the agent may make on the UTC
	// day of CreatedAt: CreateEpisodes counts this one in the same transaction and
	// refuses it with EQUOTA over the limit. Not stored.
	PublicQuota int

	// AuthorizedAt, when not zero, is when the write was judged: the agent or team
	// whose space it goes to must have existed then (else ENOTFOUND, as for one that is
	// gone). Not stored.
	AuthorizedAt time.Time

	// DropVersions, on the episode an update returns, are the numbers of earlier
	// versions to erase with the update: those that may not follow it into its new
	// space. Not stored.
	DropVersions []int

	// IdempotencyKey is the hash of host key, requester and the client's key;
	// RequestHash the hash of the request it came with. Neither is shown to clients.
	// An episode refused by its quota fails with EQUOTA.
	IdempotencyKey string
	RequestHash    string

	// TraceParent is the W3C traceparent of the request that queued the memory for
	// extraction (a write, a promotion, an update of its content), "" while tracing is
	// off: its ingestion's span links to that request's. Not shown to clients.
	TraceParent string
}

// Space returns the episode's space.
func (e *Episode) Space() Space {
	s, _ := ParseGroupID(e.GroupID)
	return s
}

// EmbedTextBytes is how much of a memory's content is embedded (extraction's and a
// write's embedding alike): a sentence model reads a few hundred tokens of it.
const EmbedTextBytes = 4000

// Writer is who wrote the memory's current content: its last updater, else whoever
// wrote it.
func (e *Episode) Writer() string {
	if e.UpdatedBy != "" {
		return e.UpdatedBy
	}
	return e.RequesterID
}

// OwnWords reports whether the memory's current content is its agent's own words for
// owner, the agent's owner now: owner wrote it (or last changed it) for the agent, and
// no one else changed it since (ContentAgent). Only such content moves between spaces
// by memgate's own doing or at its owner's word: a move, a team's dissolution, what
// compaction and reflection derive. A memory its agent's former owner wrote is not its
// new owner's words. cypher/_own_words.cypher is the same rule inside queries.
func (e *Episode) OwnWords(owner string) bool {
	return owner != "" && e.ContentAgent != "" && e.ContentAgent == e.AgentID && e.Writer() == owner
}

// Visible is the set of spaces a requester may read, computed once per request by the
// Authorizer and applied inside every read query. Empty means nothing, never "no
// filter".
type Visible struct {
	GroupIDs []string
	// AnyAgentPublic adds the public space of every agent of Org, which every
	// requester of the organization may read; it is set for reads by id, where the
	// agent is not named.
	AnyAgentPublic bool
	Org            Org
}

// PublicPrefix is what the group_ids AnyAgentPublic adds start with (they end with
// "-public").
func (v Visible) PublicPrefix() string { return v.Org.Prefix() + "agent-" }

// Contains reports whether groupID is in the set.
func (v Visible) Contains(groupID string) bool {
	for _, g := range v.GroupIDs {
		if g == groupID {
			return true
		}
	}
	if v.AnyAgentPublic {
		s, ok := ParseGroupID(groupID)
		return ok && s.Kind == SpacePublic && s.Org == v.Org
	}
	return false
}

// Version is a memory as it stood before an update replaced it.
type Version struct {
	Memory     *Episode // its fields as they were; Version is its number
	ReplacedAt time.Time
	ReplacedBy string
}

// VersionPage is one page of a memory's earlier versions, newest first.
type VersionPage struct {
	Versions   []Version
	NextCursor string
	HasMore    bool
}

// CreateResult is the outcome of storing one episode.
type CreateResult struct {
	Episode  *Episode
	Replayed bool  // an earlier request with the same idempotency key stored it
	Err      error // this item failed; the others are unaffected
}

// PageRequest asks for one page of a list. Cursor is opaque to clients.
type PageRequest struct {
	Cursor string
	Limit  int
}

// EpisodePage is one page of episodes, newest first.
type EpisodePage struct {
	Episodes   []*Episode
	NextCursor string
	HasMore    bool
}

// ScoredEpisode is a search hit.
type ScoredEpisode struct {
	Episode *Episode
	Score   float64
}

// Memories stores episodes. Every read takes the requester's visible set and applies
// it inside the query.
type Memories interface {
	// CreateEpisodes stores each episode with status queued, and its audit event if
	// any, in order: each commits no later than the next one, so a space extracts
	// them in that order; each succeeds or fails on its own. An episode whose IdempotencyKey is already stored
	// with the same RequestHash is returned with Replayed set; with another
	// RequestHash the item fails with EUNPROCESSABLE; while the other request is
	// still in flight it fails with ECONFLICT.
	CreateEpisodes(ctx context.Context, eps []*Episode) []CreateResult

	// GetEpisode returns ENOTFOUND if the episode does not exist or is not visible.
	GetEpisode(ctx context.Context, id string, vis Visible) (*Episode, error)

	// GetEpisodes returns those of the episodes ids that exist and are visible, in
	// the order of ids.
	GetEpisodes(ctx context.Context, ids []string, vis Visible) ([]*Episode, error)

	// ListEpisodes lists the episodes of the spaces in vis, newest first, only those
	// agent wrote unless agent is empty. EINVALID for a cursor it did not issue.
	ListEpisodes(ctx context.Context, vis Visible, agent string, page PageRequest) (EpisodePage, error)

	// ExpireDerived sets the expiry of agent's memories derived from one of ids
	// (derived_from) that would outlive at to at, and returns their ids.
	ExpireDerived(ctx context.Context, agent string, ids []string, at time.Time) ([]string, error)

	// EpisodeNeighbours returns, for each of ids that lies in vis, the episodes of its
	// space (and agent) just before and after it by reference time, said within
	// `within` of it, that pass the filter as SearchEpisodes applies it; nil where none.
	EpisodeNeighbours(ctx context.Context, ids []string, vis Visible, f SearchFilter, within time.Duration) (map[string][2]*Episode, error)

	// SearchEpisodes runs a fulltext search over episode content within vis; of the
	// filter it applies the range of created_at.
	SearchEpisodes(ctx context.Context, query string, vis Visible, f SearchFilter, limit int) ([]ScoredEpisode, error)

	// DeleteEpisode removes a visible episode and everything only it supports, in one
	// transaction with the event audit returns. authorize runs inside the transaction
	// on the stored episode; its error aborts the delete and is returned as is.
	// ENOTFOUND if the episode does not exist or is not visible.
	DeleteEpisode(ctx context.Context, id string, vis Visible, authorize func(*Episode) (*AuditEvent, error)) error

	// EraseExpired erases up to limit memories whose expires_at has passed, each with
	// the delete cascade in a transaction of its own with the event audit returns. A
	// memory another process erases first is skipped. Returns how many it erased.
	EraseExpired(ctx context.Context, limit int, audit func(*Episode) *AuditEvent) (int, error)

	// UpdateEpisode replaces a visible episode with the one change returns, in one
	// transaction with change's audit event: the episode is locked and read again
	// first, with its earlier versions, so of two concurrent updates the second sees
	// the first's version. The previous fields are kept as a Version, and only the
	// newest keep versions are kept (the rest, and those the new episode's
	// DropVersions names, are erased). When the content or the space changes the
	// episode is queued for extraction again and detached from what was derived from
	// it: within its space the facts only it supported are expired (system time) and
	// the rest no longer cite it; on a move to another space all of that is deleted
	// from the old space instead, and the move holds the new space's agent or team as
	// a write does (ENOTFOUND when it is gone). ENOTFOUND as for Get; change's error
	// aborts.
	UpdateEpisode(ctx context.Context, id string, vis Visible, keep int, change func(*Episode, []Version) (*Episode, *AuditEvent, error)) (*Episode, error)

	// Versions returns a visible episode and a page of its earlier versions, newest
	// first; the page's cursor is the number of the last version shown.
	Versions(ctx context.Context, id string, vis Visible, page PageRequest) (*Episode, VersionPage, error)

	// PromoteEpisode copies a visible episode into another space with provenance, in
	// one transaction with the event authorize returns. ENOTFOUND as for Get.
	PromoteEpisode(ctx context.Context, id string, vis Visible, authorize func(*Episode) (*Episode, *AuditEvent, error)) (*Episode, error)

	// ResolveConflict resolves an open conflict of vis as keep says (KeepOld: the new
	// fact never held and is expired; KeepNew: the old fact ends when the new one
	// began, and is expired; KeepBoth: neither changes), clears the conflict from both
	// facts, and records who resolved it, in one transaction with the event authorize
	// returns (authorize runs on the stored conflict; its error aborts). ENOTFOUND when
	// the conflict is not in vis, ECONFLICT when it is resolved already.
	ResolveConflict(ctx context.Context, id string, vis Visible, keep, by string, authorize func(*Conflict) (*AuditEvent, error)) (*ConflictHit, error)

	// Usage sums the costs of the memories of vis's group_ids (in the query, never
	// after it) created within q's window, leaving out those whose expires_at has
	// passed. q.AgentID is not read: the caller names the agent's spaces in vis.
	Usage(ctx context.Context, vis Visible, q UsageQuery) (Usage, error)
}

// TurnWindow is how far apart two memories of one agent and space may have been said
// to be turns of one conversation: search ranks the turns around a memory it found
// (episode_neighbours), and extraction reads a memory after the turn before it (TurnBefore).
const TurnWindow = 10 * time.Minute

// TurnBefore is, of earlier (episodes of e's space), the turn e answers: the latest by
// reference time, then creation, of e's agent said within TurnWindow before e, or nil.
func TurnBefore(e *Episode, earlier []*Episode) *Episode {
	var before *Episode
	for _, p := range earlier {
		gap := e.ValidAt.Sub(p.ValidAt)
		switch {
		case p.UUID == e.UUID || p.GroupID != e.GroupID || p.AgentID != e.AgentID || gap < 0 || gap > TurnWindow:
		case gap == 0 && !p.CreatedAt.Before(e.CreatedAt):
		case before == nil || p.ValidAt.After(before.ValidAt) ||
			(p.ValidAt.Equal(before.ValidAt) && p.CreatedAt.After(before.CreatedAt)):
			before = p
		}
	}
	return before
}
