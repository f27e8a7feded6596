package service

import (
	"context"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/memgate/memgate/graph"
)

// SearchQuery is a search request.
type SearchQuery struct {
	Query   string
	AgentID string
	Scopes  []string // team:<name>, global
	Limit   int
	Include []string // facts, entities, episodes; empty: all three
	Center  string   // an entity to walk from and rank by distance to
	Depth   int      // how far to walk from Center, 1 to 3 (0: 2)
	Filter  graph.SearchFilter
	// Types are the type and attribute filters as asked for: checked against the
	// deployment's Ontology, they become Filter.TypeFilter.
	Types graph.TypeQuery
	MMR   bool // diversify facts and entities by maximal marginal relevance
}

// SearchResult is what search found, per kind, best first.
type SearchResult struct {
	Facts    []graph.FactHit
	Entities []graph.EntityHit
	Episodes []graph.ScoredEpisode
}

// Embedder turns text into vectors (extract.Embedder): search embeds the query with
// the configured one, a memory stored without extraction is embedded as it is written.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

const (
	maxQueryBytes   = 4096
	maxFilterValues = 20
	defaultDepth    = 2
	maxDepth        = 3
	// rrfK is reciprocal rank fusion's constant: each list adds 1/(rrfK + rank) to what
	// it holds. Its paper's 60 rewards an item most lists hold at middling ranks over
	// one a list holds first; on LoCoMo's questions (two conversations, the sentence
	// model) memories' evidence recall@10 was 0.554 with 60, 0.593 with 20, 0.611
	// with 10, 0.627 with 5, 0.645 with 2 (lists of fusionDepth), and the context
	// block held 0.612, 0.663, 0.679, 0.699 and 0.713 of the evidence.
	rrfK = 2
	// fusionDepth is how many candidates each method gives fusion, whatever the limit:
	// with lists as long as the limit, a search's first ten depended on how many it
	// asked for.
	fusionDepth = 50
	mmrLambda   = 0.5 // relevance against diversity
	// A memory found bears on the turns around it in its conversation: an answer
	// follows its question, a question leads to its answer. The neighbourHits best
	// memories lend afterShare of their fused score to the turn just after them and
	// beforeShare to the one just before, when it was said within graph.TurnWindow of
	// them; a neighbour search did not find is ranked by what it was lent. On LoCoMo's
	// seven conversations (all-MiniLM-L6-v2) this took memories' evidence recall@10
	// from 0.641 to 0.681, and the context block's evidence from 0.720 to 0.754
	// (shares of 1 and 0.5: 0.655; the turns of the 20 best: no more, in half again
	// the time).
	neighbourHits = 10
	afterShare    = 0.5
	beforeShare   = 0.25
)

var (
	typeName     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)
	relationName = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)
	searchKinds  = map[string]bool{"facts": true, "entities": true, "episodes": true}
)

// Search finds facts, entities and episodes in the agent's spaces the caller can see,
// widened by the scopes within the visible set. Each kind is searched by every method
// that applies (fulltext; vector when an embedder answers; the walk from Center) and
// the lists are fused by reciprocal rank: memories by their words and by their
// meaning, as facts and entities are. Text naming agent:<id> or team:<name>
// outside the visible set is audited as crafted_query; the search still runs.
func (s *Service) Search(ctx context.Context, c Call, q SearchQuery) (_ *SearchResult, err error) {
	ctx, end := s.span(ctx, "Search", c)
	defer func() { end(err) }()
	include, limit, err := s.checkSearch(&q)
	if err != nil {
		return nil, err
	}
	vis, err := s.searchView(c, q.AgentID, q.Scopes)
	if err != nil {
		return nil, err
	}
	for _, target := range s.Auth.CraftedTargets(c.P, q.Query) {
		ev := s.event(c, graph.AuditCraftedQuery, q.AgentID, target, "search text names a space outside the visible set")
		if err := s.Audit.RecordAudit(ctx, ev); err != nil {
			return nil, graph.Wrap(graph.EUNAVAILABLE, err, "could not record the audit event; retry later")
		}
	}
	// The agent is looked up while the methods run (one round trip less): what they
	// found is dropped when it does not exist. The visible set does not depend on it.
	agent := make(chan error, 1)
	go func() { _, err := s.Dir.GetAgent(ctx, c.P.Org, q.AgentID); agent <- err }()
	f, err := s.retrieve(ctx, q, vis, s.embed(ctx, q, include), include, limit)
	if err := <-agent; err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	s.noteExpiredShare(ctx, c, q.AgentID)
	var res SearchResult
	if include["episodes"] {
		res.Episodes = rank(f.Episodes, func(h graph.ScoredEpisode) string { return h.Episode.UUID },
			func(graph.ScoredEpisode) int { return 0 }, func(graph.ScoredEpisode) []float32 { return nil },
			func(h *graph.ScoredEpisode, score float64) { h.Score = score }, false, max(limit, fusionDepth))
		if res.Episodes, err = s.withNeighbours(ctx, res.Episodes, vis, q.Filter); err != nil {
			return nil, err
		}
		res.Episodes = res.Episodes[:min(len(res.Episodes), limit)]
	}
	for _, e := range res.Episodes {
		s.provenance(c, e.Episode)
	}
	factLists, entityLists, walk := f.Facts, f.Entities, f.walk
	distance := func(string) int { return 0 }
	if walk != nil {
		factLists = append(factLists, walk.Facts) // scored by distance: already in walk order
		entityLists = append(entityLists, walk.Entities)
		distance = func(id string) int {
			if d, ok := walk.Distance[id]; ok {
				return d
			}
			return math.MaxInt
		}
	}
	if include["facts"] {
		res.Facts = rank(factLists, func(h graph.FactHit) string { return h.Fact.UUID },
			func(h graph.FactHit) int { return min(distance(h.Fact.SourceUUID), distance(h.Fact.TargetUUID)) },
			func(h graph.FactHit) []float32 { return h.Fact.FactEmbedding },
			func(h *graph.FactHit, score float64) { h.Score = score }, q.MMR, limit)
	}
	if include["entities"] {
		res.Entities = rank(entityLists, func(h graph.EntityHit) string { return h.Entity.UUID },
			func(h graph.EntityHit) int { return distance(h.Entity.UUID) },
			func(h graph.EntityHit) []float32 { return h.Entity.NameEmbedding },
			func(h *graph.EntityHit, score float64) { h.Score = score }, q.MMR, limit)
	}
	return &res, nil
}

// searchView is the visible set a search about agent reads: the agent's spaces c
// sees, widened by the scopes named (team:<name>, global), each of which c must be able
// to read (ENOTFOUND otherwise, as for a space that does not exist).
func (s *Service) searchView(c Call, agent string, names []string) (graph.Visible, error) {
	var scopes []graph.Space
	for _, name := range names {
		sp, err := c.P.Org.ParseSpaceName(agent, c.P.ID, name)
		if err != nil || (sp.Kind != graph.SpaceTeam && sp.Kind != graph.SpaceGlobal) {
			return graph.Visible{}, graph.Errorf(graph.EINVALID, "scopes take team:<name> or global")
		}
		if !s.Auth.Visible(c.P).Contains(sp.GroupID()) {
			return graph.Visible{}, graph.Errorf(graph.ENOTFOUND, "space %s not found", name)
		}
		scopes = append(scopes, sp)
	}
	return s.Auth.VisibleForAgent(c.P, agent, scopes), nil
}

// embed returns the query's vector, or nil when vector search does not apply or the
// embedder fails (search then runs on fulltext and the graph).
func (s *Service) embed(ctx context.Context, q SearchQuery, include map[string]bool) []float32 {
	if s.Embedder == nil || q.Query == "" {
		return nil
	}
	v, err := s.Embedder.EmbedQuery(ctx, q.Query)
	switch {
	case err != nil:
		s.Log.WarnContext(ctx, "search runs without vectors: the query could not be embedded", "err", err)
	case graph.Cosine(v, v) > 0: // text without words embeds to nothing to compare
		return v
	}
	return nil
}

// found is what the retrieval methods returned: one ranked list per method and kind,
// and the walk.
type found struct {
	graph.Found
	walk *graph.Walk
}

// retrieve runs every method that applies, each asked for limit candidates, at least
// fusionDepth (twice as many when MMR is to choose among them): the walk beside the rest; the text and
// vector methods in one query when the visible set is small (SearchSmall), else each
// by its own query, all at once.
func (s *Service) retrieve(ctx context.Context, q SearchQuery, vis graph.Visible, vector []float32,
	include map[string]bool, limit int) (*found, error) {
	var (
		f   found
		mu  sync.Mutex
		run errgroup.Group
	)
	n := max(limit, fusionDepth)
	if q.MMR {
		n = max(2*limit, fusionDepth)
	}
	q.Filter.WithEmbeddings = q.MMR
	if q.Center != "" {
		run.Go(func() (err error) { f.walk, err = s.Find.Walk(ctx, q.Center, q.Depth, vis, q.Filter, n); return })
	}
	if q.Query != "" {
		r := graph.Retrieval{Text: q.Query, Vector: vector, Facts: include["facts"], Entities: include["entities"], Episodes: include["episodes"]}
		run.Go(func() error {
			small, err := s.Find.SearchSmall(ctx, r, vis, q.Filter, n)
			switch {
			case err != nil:
				return err
			case small == nil:
				return s.searchEach(ctx, r, vis, q.Filter, n, limit, &mu, &f)
			}
			f.Found = *small
			return nil
		})
	}
	if err := run.Wait(); err != nil {
		return nil, err
	}
	return &f, nil
}

// searchEach runs each method of r by its own query, all at once, into f.
func (s *Service) searchEach(ctx context.Context, r graph.Retrieval, vis graph.Visible, filter graph.SearchFilter,
	n, limit int, mu *sync.Mutex, f *found) error {
	var run errgroup.Group
	if r.Facts {
		run.Go(func() error {
			hits, err := s.Find.FactsByText(ctx, r.Text, vis, filter, n)
			return collect(mu, &f.Facts, hits, err)
		})
		if r.Vector != nil {
			run.Go(func() error {
				hits, err := s.Find.FactsByVector(ctx, r.Vector, vis, filter, n)
				return collect(mu, &f.Facts, hits, s.optional(err))
			})
		}
	}
	if r.Entities {
		run.Go(func() error {
			hits, err := s.Find.EntitiesByText(ctx, r.Text, vis, filter, n)
			return collect(mu, &f.Entities, hits, err)
		})
		if r.Vector != nil {
			run.Go(func() error {
				hits, err := s.Find.EntitiesByVector(ctx, r.Vector, vis, filter, n)
				return collect(mu, &f.Entities, hits, s.optional(err))
			})
		}
	}
	if r.Episodes {
		run.Go(func() error {
			hits, err := s.Mem.SearchEpisodes(ctx, r.Text, vis, filter, n)
			return collect(mu, &f.Episodes, hits, err)
		})
		if r.Vector != nil {
			run.Go(func() error {
				hits, err := s.Find.EpisodesByVector(ctx, r.Vector, vis, filter, n)
				return collect(mu, &f.Episodes, hits, s.optional(err))
			})
		}
	}
	return run.Wait()
}

// optional lets a search go on without the vector method when it fails (as while
// Neo4j builds a vector index again, see 003_vector): the error is logged, and the
// other methods answer.
func (s *Service) optional(err error) error {
	if err != nil {
		s.Log.Warn("search runs without vectors: vector search failed", "err", err)
	}
	return nil
}

// ListFacts lists the facts of every space the caller sees for an agent (its private
// and public spaces, the caller's teams, global), or of the one space named, newest
// first, whatever their time (export reads a whole memory with it), of those the type
// filters select (EINVALID when the deployment does not declare what they name). A
// space the caller cannot read answers ENOTFOUND.
func (s *Service) ListFacts(ctx context.Context, c Call, agentID, space string, types graph.TypeQuery, page graph.PageRequest) (_ graph.FactPage, err error) {
	ctx, end := s.span(ctx, "ListFacts", c)
	defer func() { end(err) }()
	f, err := s.Ontology.Filter(types)
	if err != nil {
		return graph.FactPage{}, err
	}
	if err := s.agentListing(ctx, c, agentID, &page); err != nil {
		return graph.FactPage{}, err
	}
	if space == "" {
		return s.Find.Facts(ctx, s.agentView(c, agentID), f, page)
	}
	sp, err := c.P.Org.ParseSpaceName(agentID, c.P.ID, space)
	if err != nil {
		return graph.FactPage{}, err
	}
	if !s.Auth.Visible(c.P).Contains(sp.GroupID()) {
		return graph.FactPage{}, graph.Errorf(graph.ENOTFOUND, "space not found")
	}
	return s.Find.Facts(ctx, graph.Visible{GroupIDs: []string{sp.GroupID()}}, f, page)
}

// agentListing checks a list about an agent before it runs: the page size (the
// default for none), the agent id, the agent's existence; and audits the use of a
// share of it that lapsed.
func (s *Service) agentListing(ctx context.Context, c Call, agentID string, page *graph.PageRequest) error {
	limit, err := s.pageSize(page.Limit)
	if err != nil {
		return err
	}
	page.Limit = limit
	if err := graph.CheckID("agent_id", agentID); err != nil {
		return err
	}
	if _, err := s.Dir.GetAgent(ctx, c.P.Org, agentID); err != nil {
		return err
	}
	s.noteExpiredShare(ctx, c, agentID)
	return nil
}

// GetFact reads one fact with its entities; ENOTFOUND when the caller cannot see it.
func (s *Service) GetFact(ctx context.Context, c Call, id string) (_ *graph.FactHit, err error) {
	ctx, end := s.span(ctx, "GetFact", c)
	defer func() { end(err) }()
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return nil, graph.Errorf(graph.ENOTFOUND, "fact not found")
	}
	return s.Find.Fact(ctx, id, s.Auth.Visible(c.P))
}

// GetEntity reads one entity; ENOTFOUND when the caller cannot see it.
func (s *Service) GetEntity(ctx context.Context, c Call, id string) (_ *graph.EntityNode, err error) {
	ctx, end := s.span(ctx, "GetEntity", c)
	defer func() { end(err) }()
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return nil, graph.Errorf(graph.ENOTFOUND, "entity not found")
	}
	return s.Find.Entity(ctx, id, s.Auth.Visible(c.P))
}

// checkSearch validates a search and fills in its defaults.
func (s *Service) checkSearch(q *SearchQuery) (map[string]bool, int, error) {
	if err := graph.CheckID("agent_id", q.AgentID); err != nil {
		return nil, 0, err
	}
	q.Query = strings.TrimSpace(q.Query)
	switch {
	case q.Query == "" && q.Center == "":
		return nil, 0, graph.Errorf(graph.EINVALID, "query must not be empty unless center_entity_id is given")
	case len(q.Query) > maxQueryBytes:
		return nil, 0, graph.Errorf(graph.EINVALID, "query is longer than %d bytes", maxQueryBytes)
	}
	limit, err := s.pageSize(q.Limit)
	if err != nil {
		return nil, 0, err
	}
	include := map[string]bool{}
	for _, k := range q.Include {
		if !searchKinds[k] {
			return nil, 0, graph.Errorf(graph.EINVALID, "include takes facts, entities and episodes")
		}
		include[k] = true
	}
	if len(include) == 0 {
		include = searchKinds
	}
	if q.Center != "" {
		if _, err := uuid.Parse(q.Center); err != nil || len(q.Center) != 36 {
			return nil, 0, graph.Errorf(graph.EINVALID, "center_entity_id must be an entity id (a UUID)")
		}
		if q.Depth == 0 {
			q.Depth = defaultDepth
		}
	}
	switch {
	case q.Depth != 0 && q.Center == "":
		return nil, 0, graph.Errorf(graph.EINVALID, "max_depth needs center_entity_id")
	case q.Depth < 0 || q.Depth > maxDepth:
		return nil, 0, graph.Errorf(graph.EINVALID, "max_depth must be between 1 and %d", maxDepth)
	}
	if q.Filter.TypeFilter, err = s.Ontology.Filter(q.Types); err != nil {
		return nil, 0, err
	}
	f := q.Filter
	if err := checkNames("relations", f.Relations, relationName); err != nil {
		return nil, 0, err
	}
	switch {
	case f.AsOf != nil && f.IncludeExpired:
		return nil, 0, graph.Errorf(graph.EINVALID, "as_of and include_expired exclude each other")
	case f.CreatedAfter != nil && f.CreatedBefore != nil && !f.CreatedAfter.Before(*f.CreatedBefore):
		return nil, 0, graph.Errorf(graph.EINVALID, "created_after must be before created_before")
	}
	return include, limit, nil
}

func checkNames(field string, names []string, valid *regexp.Regexp) error {
	if len(names) > maxFilterValues {
		return graph.Errorf(graph.EINVALID, "%s takes at most %d values", field, maxFilterValues)
	}
	for _, n := range names {
		if !valid.MatchString(n) {
			return graph.Errorf(graph.EINVALID, "%s: %q is not a valid name (%s)", field, n, valid)
		}
	}
	return nil
}

// collect appends one method's hits to lists.
func collect[T any](mu *sync.Mutex, lists *[][]T, hits []T, err error) error {
	if err == nil {
		mu.Lock()
		*lists = append(*lists, hits)
		mu.Unlock()
	}
	return err
}

// rank fuses ranked lists by reciprocal rank (each list adds 1/(rrfK + rank) to the
// items it holds), puts nearer items first when there is a walk (distance; all 0
// otherwise), optionally diversifies by MMR, and keeps limit.
func rank[T any](lists [][]T, id func(T) string, distance func(T) int, embedding func(T) []float32,
	setScore func(*T, float64), mmr bool, limit int) []T {
	score := map[string]float64{}
	var items []T
	for _, list := range lists {
		for r, h := range list {
			key := id(h)
			if _, seen := score[key]; !seen {
				items = append(items, h)
			}
			score[key] += 1 / float64(rrfK+r+1)
		}
	}
	for i := range items {
		setScore(&items[i], score[id(items[i])])
	}
	sort.SliceStable(items, func(i, j int) bool {
		di, dj := distance(items[i]), distance(items[j])
		if di != dj {
			return di < dj
		}
		if si, sj := score[id(items[i])], score[id(items[j])]; si != sj {
			return si > sj
		}
		return id(items[i]) < id(items[j]) // the methods finish in any order; ties do not
	})
	if mmr {
		items = diversify(items, func(h T) float64 { return score[id(h)] }, embedding, limit)
	}
	return items[:min(limit, len(items))]
}

// diversify reorders items by maximal marginal relevance: each next item maximises
// mmrLambda x relevance - (1 - mmrLambda) x its greatest cosine similarity to the
// items already chosen; relevance is the fused score scaled to [0, 1].
func diversify[T any](items []T, relevance func(T) float64, embedding func(T) []float32, limit int) []T {
	if len(items) == 0 {
		return items
	}
	top := relevance(items[0])
	for _, h := range items {
		top = math.Max(top, relevance(h))
	}
	var chosen []T
	left := append([]T(nil), items...)
	for len(chosen) < limit && len(left) > 0 {
		best, bestValue := 0, math.Inf(-1)
		for i, h := range left {
			similar := 0.0
			for _, c := range chosen {
				similar = math.Max(similar, graph.Cosine(embedding(h), embedding(c)))
			}
			if v := mmrLambda*relevance(h)/top - (1-mmrLambda)*similar; v > bestValue {
				best, bestValue = i, v
			}
		}
		chosen = append(chosen, left[best])
		left = append(left[:best], left[best+1:]...)
	}
	return chosen
}

// withNeighbours adds to hits (fused, best first) what the best of them lend the turns
// around them (neighbourHits, afterShare, beforeShare), neighbours search did not find
// included, and ranks them again: by score, then by id.
func (s *Service) withNeighbours(ctx context.Context, hits []graph.ScoredEpisode, vis graph.Visible, f graph.SearchFilter) ([]graph.ScoredEpisode, error) {
	if len(hits) == 0 {
		return hits, nil
	}
	best := hits[:min(len(hits), neighbourHits)]
	ids := make([]string, len(best))
	for i, h := range best {
		ids[i] = h.Episode.UUID
	}
	around, err := s.Mem.EpisodeNeighbours(ctx, ids, vis, f, graph.TurnWindow)
	if err != nil {
		return nil, err
	}
	at := map[string]int{}
	for i, h := range hits {
		at[h.Episode.UUID] = i
	}
	lent := map[string]float64{}
	for _, h := range best {
		for side, e := range around[h.Episode.UUID] {
			if e == nil {
				continue
			}
			if _, found := at[e.UUID]; !found {
				at[e.UUID] = len(hits)
				hits = append(hits, graph.ScoredEpisode{Episode: e})
			}
			lent[e.UUID] += []float64{beforeShare, afterShare}[side] * h.Score
		}
	}
	for id, score := range lent {
		hits[at[id]].Score += score
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Episode.UUID < hits[j].Episode.UUID
	})
	return hits, nil
}
