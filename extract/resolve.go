package extract

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/graph"
)

// Thresholds of entity resolution: at or above the first, the same entity; between
// the two, ambiguous, for the Deduper to decide; below, a new entity.
const (
	fuzzyThreshold     = 0.8 // Jaccard similarity of name trigrams
	fuzzyAmbiguous     = 0.5
	embeddingThreshold = 0.95 // cosine similarity of name embeddings
	embeddingAmbiguous = 0.85
	maxCandidates      = 200 // entities read per episode
)

// NamePair is an extracted entity and the stored one it may be.
type NamePair struct {
	Extracted, ExtractedSummary string
	Existing, ExistingSummary   string
}

// Deduper decides, in one call for a whole episode, which ambiguous pairs name the
// same entity. The LLM extractor is one; without it ambiguous names become new
// entities.
type Deduper interface {
	SameEntities(ctx context.Context, pairs []NamePair) ([]bool, error)
}

// FactPair is a new fact and a current stored fact of the same space, with the same
// source entity, that it may contradict.
type FactPair struct {
	New, Stored *graph.Fact
}

// Judge decides, in one call for a whole episode, which stored facts the new facts
// contradict (they cannot both hold at once). The LLM extractor is one; without an
// LLM, Exclusive is.
type Judge interface {
	Contradicts(ctx context.Context, pairs []FactPair) ([]bool, error)
}

// ExclusiveRelations judges without a model: a relation of the set holds one target
// at a time, so a new fact of it contradicts the stored one with another target.
// Nothing else is judged a contradiction.
type ExclusiveRelations map[string]bool

// Exclusive is the offline judge: LIVES_IN and MARRIED_TO.
var Exclusive = ExclusiveRelations{"LIVES_IN": true, "MARRIED_TO": true}

func (x ExclusiveRelations) Contradicts(_ context.Context, pairs []FactPair) ([]bool, error) {
	out := make([]bool, len(pairs))
	for i, p := range pairs {
		out[i] = x[p.New.Name] && p.New.Name == p.Stored.Name && p.New.TargetUUID != p.Stored.TargetUUID
	}
	return out, nil
}

// Bounds of the contradiction candidates: a stored fact is asked about when it has
// the new fact's source and its relation, or a fact text this similar (cosine of the
// fact embeddings); at most this many per new fact and per episode, the most similar
// first.
const (
	contradictionSimilarity = 0.8
	maxPairsPerFact         = 5
	maxPairsPerEpisode      = 20
)

// Resolver turns an extraction into a GraphWrite against what the episode's space
// already holds. Everything it reads and writes is within ep.GroupID.
type Resolver struct {
	Know     graph.Knowledge
	Embedder Embedder
	Deduper  Deduper // may be nil
	Judge    Judge   // nil: Exclusive
	Now      func() time.Time
	// Review holds contradictions for review (memory.conflicts: review) instead of
	// ending the older fact: both stay current and a Conflict names them.
	Review bool

	// lookup reads one neighbourhood; the Runner batches it across workers.
	lookup func(context.Context, graph.NeighbourhoodQuery) (graph.Neighbourhood, error)
}

func (r *Resolver) neighbourhood(ctx context.Context, q graph.NeighbourhoodQuery) (graph.Neighbourhood, error) {
	if r.lookup != nil {
		return r.lookup(ctx, q)
	}
	n, err := r.Know.Neighbourhoods(ctx, []graph.NeighbourhoodQuery{q}, maxCandidates)
	if err != nil {
		return graph.Neighbourhood{}, err
	}
	return n[0], nil
}

// embed embeds texts and, into w, the episode's content, alone and read after the turn
// before it when there is one (Embedding, TurnEmbedding), in one call.
func (r *Resolver) embed(ctx context.Context, w *graph.GraphWrite, before *graph.Episode, texts []string) ([][]float32, error) {
	n := len(texts)
	content := graph.CleanText(w.Episode.Content, graph.EmbedTextBytes)
	texts = append(texts, content)
	if before != nil {
		// The turn before gives at most half the text: the episode's words come whole.
		texts = append(texts, graph.CleanText(graph.CleanText(before.Content, graph.EmbedTextBytes/2)+" "+content, graph.EmbedTextBytes))
	}
	vectors, err := r.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	if len(vectors) != len(texts) {
		return nil, fmt.Errorf("embedding: %d vectors for %d texts", len(vectors), len(texts))
	}
	w.Embedding = vectors[n]
	if before != nil {
		w.TurnEmbedding, w.TurnWeight = graph.TurnMeaning(w.Embedding, vectors[n+1])
	}
	return vectors[:n], nil
}

// namespace of the deterministic uuids: re-running an episode after a crash MERGEs
// onto the nodes and edges the first run may have written, never beside them.
var namespace = uuid.MustParse("5b0f9a4e-5d0c-4c49-9a53-6f2a1e0b7c11")

func stableUUID(parts ...string) string {
	return uuid.NewSHA1(namespace, []byte(strings.Join(parts, "\x00"))).String()
}

// Resolve matches the extracted entities to the space's entities (exact normalised
// name, then fuzzy name, then name embedding), merges duplicate facts, applies the
// temporal rules, and embeds what is new in one call, the episode alone and after
// before, the turn it follows (graph.TurnBefore; nil for none).
func (r *Resolver) Resolve(ctx context.Context, ep *graph.Episode, x *graph.Extracted, before *graph.Episode) (*graph.GraphWrite, error) {
	now := r.Now().UTC()
	w := &graph.GraphWrite{Episode: ep}
	// A memory taking back its speaker's previous one reads what that one said.
	q := graph.NeighbourhoodQuery{GroupID: ep.GroupID}
	if _, speaker := Retained(ep.Content); speaker != "" && before != nil {
		q.Mentioned = before.UUID
	}
	if len(x.Entities) == 0 && q.Mentioned == "" {
		_, err := r.embed(ctx, w, before, nil)
		return w, err
	}
	names := make([]string, len(x.Entities))
	for i, e := range x.Entities {
		names[i] = e.Name
	}
	q.Names = names
	near, err := r.neighbourhood(ctx, q)
	if err != nil {
		return nil, err
	}
	candidates, existing := near.Entities, near.Facts
	for _, c := range candidates {
		if c.GroupID != ep.GroupID { // the store filters; this is the second lock on the door
			return nil, fmt.Errorf("entity candidate %s from another space", c.UUID)
		}
	}
	for _, f := range existing {
		if f.GroupID != ep.GroupID {
			return nil, fmt.Errorf("fact %s from another space", f.UUID)
		}
	}

	// Embed every name and, below, every new fact, and the episode, in one call.
	var facts []string
	for _, f := range x.Facts {
		facts = append(facts, f.Fact)
	}
	vectors, err := r.embed(ctx, w, before, append(slices.Clone(names), facts...))
	if err != nil {
		return nil, err
	}

	matches := make([]*graph.EntityNode, len(x.Entities))
	var pairs []NamePair
	var pairOf []int // pair -> extracted entity
	var maybe []*graph.EntityNode
	for i, e := range x.Entities {
		var ambiguous *graph.EntityNode
		matches[i], ambiguous = matchEntity(e.Name, vectors[i], candidates)
		if matches[i] == nil && ambiguous != nil {
			pairs = append(pairs, NamePair{Extracted: e.Name, ExtractedSummary: e.Summary,
				Existing: ambiguous.Name, ExistingSummary: ambiguous.Summary})
			pairOf, maybe = append(pairOf, i), append(maybe, ambiguous)
		}
	}
	if len(pairs) > 0 && r.Deduper != nil {
		same, err := r.Deduper.SameEntities(ctx, pairs)
		var llm *LLMError
		switch {
		case errors.As(err, &llm) && llm.Kind == "malformed":
			// No answer read after its retries: the names stay apart, as without a
			// model, rather than the whole episode extracted and resolved again.
			same = nil
		case err != nil:
			return nil, fmt.Errorf("entity resolution: %w", err)
		}
		for p, yes := range same {
			if yes {
				// Remembered: the next episode naming it so resolves without asking.
				node, alias := maybe[p], x.Entities[pairOf[p]].Name
				matches[pairOf[p]] = node
				if !slices.ContainsFunc(append([]string{node.Name}, node.Aliases...), func(n string) bool { return Normalize(n) == Normalize(alias) }) {
					node.Aliases = append(node.Aliases, alias)
				}
			}
		}
	}

	byName := map[string]*graph.EntityNode{} // normalised extracted name -> node
	said := map[*graph.EntityNode]string{}   // what this episode says of each node
	for i, e := range x.Entities {
		node := matches[i]
		if node == nil {
			node = &graph.EntityNode{UUID: stableUUID(ep.GroupID, Normalize(e.Name)), Name: e.Name, GroupID: ep.GroupID,
				Type: e.Type, NameEmbedding: vectors[i], CreatedAt: now}
		} else {
			if node.Type == "" {
				node.Type = e.Type
			}
			if len(node.NameEmbedding) == 0 {
				node.NameEmbedding = vectors[i]
			}
		}
		if _, dup := byName[Normalize(e.Name)]; !dup && !slices.Contains(w.Entities, node) {
			w.Entities = append(w.Entities, node)
		}
		said[node] = graph.MergeDescription(e.Summary, said[node])
		byName[Normalize(e.Name)] = node
		// Its type's attributes, when it is of that type: the newer statement wins, the
		// older stays in its history.
		if node.Type == e.Type {
			for _, name := range slices.Sorted(maps.Keys(e.Attributes)) {
				node.State(name, e.Attributes[name], ep.ValidAt, ep.UUID)
			}
		}
	}
	// The episode's words go in front of what earlier episodes said, and are kept on
	// its mention, from which the store recomputes the description when it goes.
	for _, node := range w.Entities {
		node.Description = graph.MergeDescription(said[node], node.Description)
		w.Mentions = append(w.Mentions, graph.Mention{Entity: node.UUID, Description: said[node]})
	}

	changed := map[string]*graph.Fact{}
	stored := slices.Clone(existing) // the facts before this episode
	var added []*graph.Fact
	for i, xf := range x.Facts {
		src, tgt := byName[Normalize(xf.Source)], byName[Normalize(xf.Target)]
		if src == nil || tgt == nil {
			continue
		}
		if f := sameFact(existing, src.UUID, tgt.UUID, xf); f != nil {
			if f.ExpiredAt != nil && f.InvalidAt == nil {
				// Retracted when the memory stating it was changed, and stated again:
				// it is current once more, this episode's alone and in its words (the
				// retracted ones are the old content's, which no memory states now).
				f.ExpiredAt, f.Episodes = nil, nil
				f.Fact, f.FactEmbedding = xf.Fact, vectors[len(names)+i]
			}
			for name, v := range xf.Attributes { // the latest statement's values
				if f.Attributes == nil {
					f.Attributes = map[string]any{}
				}
				f.Attributes[name] = v
			}
			if !slices.Contains(f.Episodes, ep.UUID) {
				// After the first, whose words the fact keeps (episode_unlink relies on it).
				f.Episodes = append(f.Episodes, ep.UUID)
			}
			if xf.ValidAt != nil {
				f.Start(*xf.ValidAt)
			}
			if xf.InvalidAt != nil {
				f.End(*xf.InvalidAt, now)
			}
			changed[f.UUID] = f
			continue
		}
		validKey := ""
		if xf.ValidAt != nil {
			validKey = xf.ValidAt.Format(time.RFC3339)
		}
		f := &graph.Fact{UUID: stableUUID(ep.GroupID, src.UUID, xf.Relation, tgt.UUID, validKey), Name: xf.Relation,
			Fact: xf.Fact, SourceUUID: src.UUID, TargetUUID: tgt.UUID, GroupID: ep.GroupID, Episodes: []string{ep.UUID},
			FactEmbedding: vectors[len(names)+i], CreatedAt: now, ValidAt: xf.ValidAt, ReferenceTime: ep.ValidAt,
			Attributes: xf.Attributes, Note: xf.Note}
		if xf.InvalidAt != nil {
			f.End(*xf.InvalidAt, now)
		} else {
			// A start the text does not state is the reference time, assumed, so an end
			// stated later and earlier than that leaves the start unknown; one it states
			// in relative words is resolved against the reference time.
			from, assumed := graph.StatedStart(xf.Fact, xf.ValidAt, ep.ValidAt)
			f.ValidAt, f.StartAssumed = &from, assumed
		}
		existing = append(existing, f)
		changed[f.UUID] = f
		added = append(added, f)
	}
	if w.Conflicts, err = r.invalidate(ctx, ep, stored, added, changed, now); err != nil {
		return nil, fmt.Errorf("contradictions: %w", err)
	}
	// What the memory corrects or retracts ends as of it, whatever the extraction made of it.
	nameOf := map[string]string{}
	for _, n := range append(slices.Clone(candidates), w.Entities...) {
		nameOf[n.UUID] = n.Name
	}
	for _, f := range corrected(ep, before, stored, added, w.Entities, nameOf) {
		f.End(ep.ValidAt, now)
		changed[f.UUID] = f
	}
	for _, f := range changed {
		w.Facts = append(w.Facts, f)
	}
	summarize(w.Entities, existing)
	slices.SortFunc(w.Facts, func(a, b *graph.Fact) int { return strings.Compare(a.UUID, b.UUID) })
	return w, nil
}

// summarize writes each entity's summary (Graphiti's Entity.summary) by
// graph.EntitySummary: what the episodes said of it and the facts about it that hold
// now, so a fact that ended leaves the summary with it; the extraction call's
// descriptions and no call of its own. facts are the space's facts touching them, as
// resolved.
func summarize(entities []*graph.EntityNode, facts []*graph.Fact) {
	for _, n := range entities {
		n.Summary = graph.EntitySummary(n.UUID, n.Description, facts)
	}
}

// invalidate asks the judge, in one call, which stored current facts the episode's
// new current facts contradict, and applies Graphiti's temporal rules to each pair:
// the older fact stops holding (invalid_at) when the newer starts, and is expired
// now (expired_at); nothing is deleted. A new fact about a time before the stored
// one began is the one that ends. With Review, nothing ends: each pair becomes a
// Conflict both facts name, returned for the write.
func (r *Resolver) invalidate(ctx context.Context, ep *graph.Episode, stored, added []*graph.Fact, changed map[string]*graph.Fact,
	now time.Time) ([]*graph.Conflict, error) {
	pairs := contradictionCandidates(stored, added)
	if len(pairs) == 0 {
		return nil, nil
	}
	judge := r.Judge
	if judge == nil {
		judge = Exclusive
	}
	yes, err := judge.Contradicts(ctx, pairs)
	if err != nil {
		return nil, err
	}
	var conflicts []*graph.Conflict
	for i, p := range pairs {
		if !yes[i] || p.Stored.InvalidAt != nil || p.New.InvalidAt != nil {
			continue // not a contradiction, or one side already ended by another pair
		}
		if r.Review {
			c := &graph.Conflict{UUID: stableUUID(ep.GroupID, "conflict", p.Stored.UUID, p.New.UUID), GroupID: ep.GroupID,
				Old: p.Stored.UUID, New: p.New.UUID, Episode: ep.UUID, CreatedAt: now}
			for _, f := range []*graph.Fact{p.Stored, p.New} {
				if !slices.Contains(f.Conflicts, c.UUID) {
					f.Conflicts = append(f.Conflicts, c.UUID)
				}
			}
			changed[p.Stored.UUID] = p.Stored
			conflicts = append(conflicts, c)
			continue
		}
		if p.Stored.ValidAt != nil && !p.Stored.StartAssumed && p.New.ValidAt != nil && p.New.ValidAt.Before(*p.Stored.ValidAt) {
			p.New.End(*p.Stored.ValidAt, now) // the new fact tells of a time before the stored one began
			continue
		}
		if p.New.ValidAt != nil {
			p.Stored.End(*p.New.ValidAt, now)
			changed[p.Stored.UUID] = p.Stored
		}
	}
	return conflicts, nil
}

// contradictionCandidates pairs each new current fact with the stored current facts
// of its source that share its relation or read alike (see the bounds above).
func contradictionCandidates(stored, added []*graph.Fact) []FactPair {
	var pairs []FactPair
	for _, f := range added {
		if f.InvalidAt != nil {
			continue
		}
		type scored struct {
			fact  *graph.Fact
			score float64
		}
		var near []scored
		for _, old := range stored {
			if old.SourceUUID != f.SourceUUID || old.UUID == f.UUID || old.InvalidAt != nil || old.ExpiredAt != nil {
				continue
			}
			score := graph.Cosine(f.FactEmbedding, old.FactEmbedding)
			if old.Name == f.Name {
				near = append(near, scored{old, 2 + score}) // the same relation always, and first
			} else if score >= contradictionSimilarity {
				near = append(near, scored{old, score})
			}
		}
		slices.SortStableFunc(near, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
		for _, n := range near[:min(len(near), maxPairsPerFact)] {
			if len(pairs) == maxPairsPerEpisode {
				return pairs
			}
			pairs = append(pairs, FactPair{New: f, Stored: n.fact})
		}
	}
	return pairs
}

// sameFact finds the stored fact an extracted one repeats: same ends, same relation,
// and either still open or the same period.
func sameFact(facts []*graph.Fact, src, tgt string, xf graph.ExtractedFact) *graph.Fact {
	for _, f := range facts {
		if f.SourceUUID != src || f.TargetUUID != tgt || f.Name != xf.Relation {
			continue
		}
		// An ended fact and a new start (valid_at after the end) are two periods.
		if f.InvalidAt != nil && xf.ValidAt != nil && xf.ValidAt.After(*f.InvalidAt) {
			continue
		}
		return f
	}
	return nil
}

// matchEntity returns the candidate an extracted name surely refers to (exact
// normalised name, then fuzzy name, then embedding), or else the best ambiguous one.
func matchEntity(name string, vector []float32, candidates []*graph.EntityNode) (match, ambiguous *graph.EntityNode) {
	key := Normalize(name)
	for _, c := range candidates {
		if Normalize(c.Name) == key || slices.ContainsFunc(c.Aliases, func(a string) bool { return Normalize(a) == key }) {
			return c, nil
		}
	}
	var fuzzy, near *graph.EntityNode
	fuzzyScore, nearScore := 0.0, 0.0
	for _, c := range candidates {
		if s := jaccard(trigrams(key), trigrams(Normalize(c.Name))); s > fuzzyScore {
			fuzzy, fuzzyScore = c, s
		}
		if s := graph.Cosine(vector, c.NameEmbedding); s > nearScore {
			near, nearScore = c, s
		}
	}
	switch {
	case fuzzyScore >= fuzzyThreshold:
		return fuzzy, nil
	case nearScore >= embeddingThreshold:
		return near, nil
	case fuzzyScore >= fuzzyAmbiguous:
		return nil, fuzzy
	case nearScore >= embeddingAmbiguous:
		return nil, near
	}
	return nil, nil
}

func trigrams(s string) map[string]bool {
	r := []rune(" " + s + " ")
	out := map[string]bool{}
	for i := 0; i+3 <= len(r); i++ {
		out[string(r[i:i+3])] = true
	}
	return out
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for k := range a {
		if b[k] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
