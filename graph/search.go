package graph

import (
	"context"
	"time"
)

// SearchFilter narrows what search returns. The zero value asks for the facts valid
// now and not expired, of any relation, between entities of any type.
type SearchFilter struct {
	TypeFilter                // the deployment's types and their attributes
	Relations      []string   // relation names of facts
	CreatedAfter   *time.Time // system time: created at or after
	CreatedBefore  *time.Time // system time: created before
	AsOf           *time.Time // world time: the facts valid then, as memgate knows them now
	IncludeExpired bool       // every fact, whatever its time
	WithEmbeddings bool       // hits carry their embeddings (diversifying needs them)
}

// FactHit is a fact found by search, with its two entities.
type FactHit struct {
	Fact           *Fact
	Source, Target *EntityNode
	Score          float64
}

// EntityHit is an entity found by search.
type EntityHit struct {
	Entity *EntityNode
	Score  float64
}

// Walk is what a breadth-first walk from a center entity reached: every entity's
// distance in facts from the center (the center itself 0), and the nearest entities
// that pass the filter and facts touching them, each scored by its distance (a fact
// one step further than its nearer end), nearest first.
type Walk struct {
	Distance map[string]int
	Entities []EntityHit
	Facts    []FactHit
}

// FactPage is one page of facts, newest first.
type FactPage struct {
	Facts      []FactHit
	NextCursor string
	HasMore    bool
}

// EntityFilter narrows a list of entities: by their types and attributes (TypeFilter's
// EntityTypes and Attributes); NamePrefix, the start of the name, compared without
// case ("" for any name).
type EntityFilter struct {
	TypeFilter
	NamePrefix string
}

// EntityPage is one page of entities, by name (compared without case), then id.
type EntityPage struct {
	Entities   []*EntityNode
	NextCursor string
	HasMore    bool
}

// ConflictHit is a conflict with its two facts.
type ConflictHit struct {
	Conflict *Conflict
	Old, New FactHit
}

// ConflictPage is one page of open conflicts, newest first.
type ConflictPage struct {
	Conflicts  []ConflictHit
	NextCursor string
	HasMore    bool
}

// Retrieval is what a search asks its methods: the text, its vector (nil leaves out
// the vector methods), and the kinds to search.
type Retrieval struct {
	Text                      string
	Vector                    []float32
	Facts, Entities, Episodes bool
}

// Found is what the retrieval methods found: one list per method and kind, best first.
type Found struct {
	Facts    [][]FactHit
	Entities [][]EntityHit
	Episodes [][]ScoredEpisode
}

// Searcher runs search's retrieval methods, each within the visible set vis. Each
// returns at most limit hits, best first.
type Searcher interface {
	// SearchSmall runs every text and vector method of r at once when vis holds so
	// few items that each is scored exactly, in one round trip; nil when it holds
	// more, and the caller asks each method.
	SearchSmall(ctx context.Context, r Retrieval, vis Visible, f SearchFilter, limit int) (*Found, error)
	FactsByText(ctx context.Context, text string, vis Visible, f SearchFilter, limit int) ([]FactHit, error)
	FactsByVector(ctx context.Context, v []float32, vis Visible, f SearchFilter, limit int) ([]FactHit, error)
	EntitiesByText(ctx context.Context, text string, vis Visible, f SearchFilter, limit int) ([]EntityHit, error)
	EntitiesByVector(ctx context.Context, v []float32, vis Visible, f SearchFilter, limit int) ([]EntityHit, error)
	// EpisodesByVector ranks the episodes of vis by the cosine of their content's
	// embedding to v; of f it applies the range of created_at.
	EpisodesByVector(ctx context.Context, v []float32, vis Visible, f SearchFilter, limit int) ([]ScoredEpisode, error)
	// Walk walks at most depth facts from center and returns the limit nearest
	// entities and facts; ENOTFOUND when center is not an entity of the visible set.
	Walk(ctx context.Context, center string, depth int, vis Visible, f SearchFilter, limit int) (*Walk, error)
	// Facts lists the facts of vis that f selects, newest first, whatever their time.
	Facts(ctx context.Context, vis Visible, f TypeFilter, page PageRequest) (FactPage, error)
	// Entities lists the entities of vis that f selects, by name (compared without
	// case), then id. EINVALID for a cursor it did not issue.
	Entities(ctx context.Context, vis Visible, f EntityFilter, page PageRequest) (EntityPage, error)
	// Conflicts lists the open conflicts of vis, newest first.
	Conflicts(ctx context.Context, vis Visible, page PageRequest) (ConflictPage, error)
	// Fact and Entity read one by id; ENOTFOUND when it is not in vis.
	Fact(ctx context.Context, id string, vis Visible) (*FactHit, error)
	Entity(ctx context.Context, id string, vis Visible) (*EntityNode, error)
}
