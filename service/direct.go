package service

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/memgate/memgate/graph"
)

// NewFact is a fact an agent states directly, as a client described it: source
// RELATION target, in a space chosen as for a memory.
type NewFact struct {
	AgentID    string
	Visibility string
	Team       string
	Source     NamedEntity
	Relation   string // SCREAMING_SNAKE_CASE, e.g. WORKS_AT
	Target     NamedEntity
	Fact       string // the sentence; default "source relation target" in words
	ValidAt    *time.Time
	InvalidAt  *time.Time
}

// NamedEntity is one end of a direct fact: a name and, optionally, a type (an entity
// type of ingest.entity_types; another is dropped as extraction drops it).
type NamedEntity struct {
	Name string
	Type string
}

const maxFactBytes = 1000

// AddFact stores f as a memory of its own (source json, source_description direct)
// under the same rules as any memory (owner-only writes, confinement, visibility
// rules, credential refusal, the public quota, Idempotency-Key), then waits up to
// wait for the pipeline to add it as it adds an extracted fact (entities resolved in
// the space, contradictions ended by the same temporal rules, conflicts held under
// review). It returns the fact as stored (merged with an equal one, if the space held
// it), or nil when the pipeline has not added it within wait, with the memory.
func (s *Service) AddFact(ctx context.Context, c Call, f NewFact, idemKey string, wait time.Duration) (_ *graph.FactHit, _ Added, err error) {
	ctx, end := s.span(ctx, "AddFact", c)
	defer func() { end(err) }()
	x, err := checkFact(&f)
	if err != nil {
		return nil, Added{}, err
	}
	added, errs := s.Add(ctx, c, []NewMemory{{AgentID: f.AgentID, Visibility: f.Visibility, Team: f.Team,
		Text: graph.DirectContent(x), Source: graph.SourceJSON, SourceDescription: graph.SourceDirect}}, idemKey)
	if errs[0] != nil {
		return nil, Added{}, errs[0]
	}
	a := added[0]
	if wait <= 0 {
		return nil, a, nil
	}
	vis := s.Auth.Visible(c.P)
	if !vis.Contains(a.Episode.GroupID) {
		return nil, a, nil // written where the caller does not read (a delegate's private write): 202
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for e := a.Episode; e.Status != graph.StatusDone; {
		select {
		case <-ctx.Done():
			return nil, a, ctx.Err()
		case <-deadline.C:
			return nil, a, nil
		case <-tick.C:
		}
		e, err = s.Mem.GetEpisode(ctx, a.Episode.UUID, vis)
		if graph.ErrorCode(err) == graph.ENOTFOUND {
			return nil, a, nil // no longer the caller's to read (or gone): accepted all the same, 202
		}
		if err != nil {
			return nil, a, err
		}
		if e.Status == graph.StatusFailed {
			return nil, a, graph.Errorf(graph.EUNPROCESSABLE, "the fact could not be added: %s (memory %s)", e.LastError, e.UUID)
		}
		a.Episode = e
	}
	// The fact is read as the caller is now, not as it was when the wait began: a
	// share or a membership withdrawn meanwhile shows nothing (202 with the memory).
	now, err := s.Resolve(ctx, c.P.Host, "", c.P.ID, c.P.Asserted, c.RequestID)
	if err != nil {
		return nil, a, err
	}
	// The memory's facts are every fact its save touched (one it ended, too): the
	// stated one is the one of its relation the memory supports.
	for _, id := range a.Episode.FactIDs {
		hit, err := s.GetFact(ctx, now, id)
		switch {
		case graph.ErrorCode(err) == graph.ENOTFOUND:
			continue
		case err != nil:
			return nil, a, err
		case hit.Fact.Name == x.Facts[0].Relation && slices.Contains(hit.Fact.Episodes, a.Episode.UUID):
			return hit, a, nil
		}
	}
	if len(a.Episode.FactIDs) == 0 {
		return nil, a, graph.Errorf(graph.EUNPROCESSABLE, "the fact was dropped as extraction drops one (memory %s); see its types and relation", a.Episode.UUID)
	}
	return nil, a, nil
}

// checkFact validates f and returns what its memory states.
func checkFact(f *NewFact) (*graph.Extracted, error) {
	for field, e := range map[string]*NamedEntity{"source": &f.Source, "target": &f.Target} {
		e.Name = graph.CleanText(e.Name, graph.MaxEntityNameRunes+1)
		switch {
		case e.Name == "":
			return nil, graph.Errorf(graph.EINVALID, "%s.name is required", field)
		case len([]rune(e.Name)) > graph.MaxEntityNameRunes:
			return nil, graph.Errorf(graph.EINVALID, "%s.name is longer than %d characters", field, graph.MaxEntityNameRunes)
		case e.Type != "" && !typeName.MatchString(e.Type):
			return nil, graph.Errorf(graph.EINVALID, "%s.type: %q is not a valid name (%s)", field, e.Type, typeName)
		}
	}
	switch {
	case !relationName.MatchString(f.Relation):
		return nil, graph.Errorf(graph.EINVALID, "relation must be SCREAMING_SNAKE_CASE (%s), e.g. WORKS_AT", relationName)
	case strings.EqualFold(f.Source.Name, f.Target.Name):
		return nil, graph.Errorf(graph.EINVALID, "source and target must be two entities")
	case len(f.Fact) > maxFactBytes:
		return nil, graph.Errorf(graph.EINVALID, "fact is longer than %d bytes", maxFactBytes)
	case f.ValidAt != nil && f.InvalidAt != nil && f.InvalidAt.Before(*f.ValidAt):
		return nil, graph.Errorf(graph.EINVALID, "invalid_at must not be before valid_at")
	}
	sentence := graph.CleanText(f.Fact, maxFactBytes)
	if sentence == "" {
		sentence = f.Source.Name + " " + strings.ToLower(strings.ReplaceAll(f.Relation, "_", " ")) + " " + f.Target.Name
	}
	utc := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		u := t.UTC()
		return &u
	}
	return &graph.Extracted{
		Entities: []graph.ExtractedEntity{{Name: f.Source.Name, Type: f.Source.Type}, {Name: f.Target.Name, Type: f.Target.Type}},
		Facts: []graph.ExtractedFact{{Source: f.Source.Name, Target: f.Target.Name, Relation: f.Relation, Fact: sentence,
			ValidAt: utc(f.ValidAt), InvalidAt: utc(f.InvalidAt)}},
	}, nil
}
