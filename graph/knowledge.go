package graph

import (
	"context"
	"time"
)

// EntityNode is a Graphiti :Entity node: a person, place, thing or idea named in a
// space's episodes. It belongs to exactly one space; entities are never merged across
// group_ids, since a merged node would carry one space's facts into another.
type EntityNode struct {
	UUID          string
	Name          string
	GroupID       string
	Type          string // extra label, e.g. Person; "" for a plain Entity
	Summary       string // Description, then the current facts about it, newest first (EntitySummary)
	Description   string // what the episodes said of it, the newest first (Description)
	NameEmbedding []float32
	CreatedAt     time.Time
	Aliases       []string // other names resolution confirmed for it ("Robert J. Smith" of Robert Smith)
	// Attributes are the values of its type's attributes (ingest.entity_types), each
	// the newest statement of AttributeHistory; stored as node properties of the same
	// names. A value is a string, int64 or float64, bool, or time.Time (a date).
	Attributes map[string]any
	// AttributeHistory is every value its attributes were stated to have, oldest
	// first (State).
	AttributeHistory []AttributeChange
}

// MaxEntityNameRunes bounds an entity's name: extraction cuts longer ones.
const MaxEntityNameRunes = 100

// Fact is a Graphiti RELATES_TO edge between two entities of one space. ValidAt and
// InvalidAt are world time (when it held); CreatedAt and ExpiredAt system time (when
// memgate learned it and when it learned it no longer holds). A contradicted fact is
// expired, never deleted.
type Fact struct {
	UUID          string
	Name          string // the relation, SCREAMING_SNAKE_CASE
	Fact          string // the sentence
	SourceUUID    string
	TargetUUID    string
	GroupID       string
	Episodes      []string // the episodes that support it; the first stated it first, and Fact is its words
	FactEmbedding []float32
	CreatedAt     time.Time
	ExpiredAt     *time.Time
	ValidAt       *time.Time
	InvalidAt     *time.Time
	// StartAssumed: the text gave no start, and ValidAt is the reference time of the
	// episode that stated it (Graphiti's convention), not a date anyone stated.
	StartAssumed bool
	// OverruledStart is a stated start a later statement overruled: it ended the fact
	// before that start (End). ValidAt is then unknown.
	OverruledStart *time.Time
	ReferenceTime  time.Time // the reference time of the episode that first stated it (Graphiti's reference_time)
	Conflicts      []string  // the open conflicts it is part of (memory.conflicts: review)
	// Attributes are the values of its edge type's attributes (ingest.edge_types),
	// stored as edge properties of the same names.
	Attributes map[string]any
	// Note says why a fact has the generic relation (GenericRelation): it was given an
	// edge type that does not join the types of its ends.
	Note string
}

// Conflict is a contradiction held for review (memory.conflicts: review): a new fact
// judged to contradict a stored current one of the same space. Both stay current, each
// naming the conflict, until a writer of the space resolves it: keep the old fact, the
// new one, or both; then the temporal rules apply as they would have.
type Conflict struct {
	UUID       string
	GroupID    string
	Old, New   string // the facts' uuids
	Episode    string // the episode whose extraction found it
	CreatedAt  time.Time
	Keep       string // "" while open; old, new or both once resolved
	ResolvedBy string
	ResolvedAt *time.Time
}

// Ways to resolve a conflict.
const (
	KeepOld  = "old"
	KeepNew  = "new"
	KeepBoth = "both"
)

// Extracted is what an extractor read in one episode, before resolution.
type Extracted struct {
	Entities []ExtractedEntity `json:"entities"`
	Facts    []ExtractedFact   `json:"facts"`
}

type ExtractedEntity struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Summary string `json:"summary"`
	// Attributes are the values of the type's attributes the episode states.
	Attributes map[string]any `json:"attributes,omitempty"`
}

type ExtractedFact struct {
	Source    string     `json:"source"`
	Target    string     `json:"target"`
	Relation  string     `json:"relation"`
	Fact      string     `json:"fact"`
	ValidAt   *time.Time `json:"valid_at"`
	InvalidAt *time.Time `json:"invalid_at"`
	// Attributes are the values of the edge type's attributes the episode states.
	Attributes map[string]any `json:"attributes,omitempty"`
	// Note says why the relation is GenericRelation (extraction's validation).
	Note string `json:"-"`
}

// GraphWrite is what processing one episode adds to and changes in its space, saved
// in one transaction.
type GraphWrite struct {
	Episode  *Episode
	Entities []*EntityNode // new, or existing with a new summary
	Mentions []Mention     // the entities the episode mentions, once each
	Facts    []*Fact       // new, or existing with more episodes or new temporal bounds
	// Conflicts are the contradictions found, when they are held for review; their
	// facts are among Facts.
	Conflicts []*Conflict
	// Context are the earlier episodes of the space the extraction was shown: what it
	// derived may hold their words, so when one of them leaves the space, changes or
	// goes, this episode is extracted again without it (episode_context_users).
	Context []string
	// Cost is what the attempt that made this write cost: added to the episode's in the
	// transaction that saves the write (or, when the lease was lost, that refuses it).
	Cost Cost
	// Embedding is the episode's content embedded, which ranks it by meaning in search
	// (nil: it has none). TurnEmbedding and TurnWeight are TurnMeaning of it and of its
	// content read after the turn before it (TurnBefore, one of Context), which search
	// ranks it by instead (nil: it follows none). A reply ("Yes, last week!") means
	// little alone.
	Embedding, TurnEmbedding []float32
	TurnWeight               float64
}

// Mention is an episode's mention of an entity and what that episode said of it, its
// part of the entity's description (Description, EntitySummary). It is kept on the
// mention, so when the episode goes its words can leave the summary with it.
type Mention struct {
	Entity      string // the entity's uuid
	Description string // "" when the episode said nothing of it beyond its name
}

// Queue is the durable ingestion queue: queued episodes in Neo4j, claimed with an
// expiring lease, oldest first and strictly in order within one group_id.
type Queue interface {
	// Claim leases up to n claimable episodes for worker: per group_id the oldest
	// queued one (or one whose lease expired), and only when no other episode of its
	// group is being processed or waits to be retried. scope is a group_id prefix to
	// claim from; "" claims from every space (tests confine a worker to their own).
	// Each comes with up to context done episodes of its space created before it,
	// newest first. taken counts the candidates another worker claimed (or changed)
	// between the claim's choice and its lock: a lease conflict, none of them leased.
	Claim(ctx context.Context, worker, scope string, lease time.Duration, n, context int) (claimed []Claimed, taken int, err error)
	// Renew extends worker's lease; ECONFLICT when the lease was lost.
	Renew(ctx context.Context, id, worker string, lease time.Duration) error
	// Complete saves the writes and marks their episodes done, all in one transaction
	// (a group commit), each only if worker still holds its lease and the episode is
	// still in the space and has the content the write was extracted from (a move or
	// a rewrite queues it again, and the same worker may claim it again before the
	// older write arrives). The result has one entry per write: nil, or ECONFLICT when
	// the lease was lost (nothing of that write is saved). An error from the database
	// fails them all. Each write's Cost is added to its episode's in the same
	// transaction, whether the write is saved or refused for a lost lease.
	Complete(ctx context.Context, worker string, ws []*GraphWrite) ([]error, error)
	// Release records a failed attempt and adds what it cost to the episode's, in one
	// write: the episode is queued again to be retried after retryAt, or failed with
	// reason when retryAt is nil.
	Release(ctx context.Context, id, worker, reason string, retryAt *time.Time, cost Cost) error
	// Return hands a claimed episode back untouched, to be claimed again at once: the
	// attempt does not count, what it cost does (added in the same write).
	Return(ctx context.Context, id, worker string, cost Cost) error
	// Requeue puts a failed, visible episode back in the queue; ENOTFOUND if it is not
	// visible, ECONFLICT if it has not failed.
	Requeue(ctx context.Context, id string, vis Visible) (*Episode, error)
	// QueueDepth counts the episodes not done (queued, processing, failed) in the
	// spaces whose group_id starts with scope ("" for all).
	QueueDepth(ctx context.Context, scope string) (map[string]int, error)
	// Queued returns a channel closed the next time an episode may have become
	// claimable through this process (queued, handed back, or the one before it in
	// its space finished) in a space whose group_id starts with scope; what other
	// processes queue is seen only by claiming.
	Queued(scope string) <-chan struct{}
}

// Claimed is a leased episode and the earlier episodes of its space.
type Claimed struct {
	Episode  *Episode
	Previous []*Episode
	// Types are the types its space's owner chose (SpaceTypes), nil when it chose
	// none: the deployment's apply.
	Types *SpaceTypes
}

// NeighbourhoodQuery asks for the part of one space an episode's names may refer to.
type NeighbourhoodQuery struct {
	GroupID string
	Names   []string
	// Mentioned is an episode of the space whose entities are candidates too, named or
	// not ("" none): a memory retracting it reads what it said.
	Mentioned string
}

// Neighbourhood is the answer: candidate entities and the facts touching them.
type Neighbourhood struct {
	Entities []*EntityNode
	Facts    []*Fact
}

// Knowledge reads what resolution needs from one space.
type Knowledge interface {
	// Neighbourhoods answers each query with the entities of its space that may be
	// the ones its names refer to (the same name ignoring case, or sharing a word), at
	// most limit each, and every fact of that space touching them; in one round trip.
	Neighbourhoods(ctx context.Context, qs []NeighbourhoodQuery, limit int) ([]Neighbourhood, error)
}
