package service

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// Summarizer writes one summary of texts (oldest first) of at most maxBytes bytes, and
// reflects on texts and facts: a summary and a few rules, together at most maxBytes.
// The LLM, or without one the offline extractive summarizer.
type Summarizer interface {
	Summarize(ctx context.Context, texts []string, maxBytes int) (string, error)
	Reflect(ctx context.Context, texts, facts []string, maxBytes int) (summary string, rules []string, err error)
}

// Bounds of a compaction.
const (
	CompactTokensDefault = 1000
	compactTokensMin     = 16
	compactTokensMax     = 8192
	compactMaxMemories   = 100 // named, or the newest read since a time
)

// CompactQuery asks for a summary of an agent's memories: those named, or those the
// agent wrote since a time (the newest compactMaxMemories).
type CompactQuery struct {
	AgentID    string
	EpisodeIDs []string
	Since      *time.Time
	MaxTokens  int // 0: CompactTokensDefault
}

// The source_description of what compaction and reflection write.
const (
	SourceCompaction = "compaction"
	SourceReflection = "reflection"
)

// Compact summarizes memories of an agent within max_tokens and stores the summary as
// a memory (source_description compaction, derived_from the memories read), queued
// for extraction like any other. It draws only on the agent's own words
// (graph.Episode.OwnWords: what its owner, the caller, wrote for it), so nothing of a
// team's, a delegate's or a former owner's enters the summary; and the summary lands
// where it is no more visible than its least visible source (distilledSpace): the
// agent's private space for memories of its private and public spaces (those since
// a time are read from there alone), or the one other space all the memories named lie
// in (a team's, the owner's shared space). The caller must be able to write that
// space (an audited EFORBIDDEN otherwise); a named memory it cannot see, or that is
// not in the agent's view, is ENOTFOUND; one it sees that is not the agent's own
// words, or that lies apart from the others named, is an audited EFORBIDDEN. The
// budget is in bytes (see extract.Cut): at most max_tokens tokens for any byte-level
// BPE tokenizer.
func (s *Service) Compact(ctx context.Context, c Call, q CompactQuery) (_ *graph.Episode, err error) {
	ctx, end := s.span(ctx, "Compact", c)
	defer func() { end(err) }()
	if err := graph.CheckID("agent_id", q.AgentID); err != nil {
		return nil, err
	}
	switch {
	case (len(q.EpisodeIDs) > 0) == (q.Since != nil):
		return nil, graph.Errorf(graph.EINVALID, "give either episode_ids or since")
	case len(q.EpisodeIDs) > compactMaxMemories:
		return nil, graph.Errorf(graph.EINVALID, "at most %d episode_ids", compactMaxMemories)
	}
	if q.MaxTokens, err = s.distilling(ctx, c, q.AgentID, q.MaxTokens, SourceCompaction); err != nil {
		return nil, err
	}
	read, err := s.compacted(ctx, c, q)
	if err != nil {
		return nil, err
	}
	if len(read) == 0 {
		return nil, graph.Errorf(graph.EINVALID, "no memories in the agent's own words to compact")
	}
	space, err := s.distilledSpace(ctx, c, q.AgentID, read)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(read))
	for i, e := range read {
		texts[i] = e.Content
	}
	summary, err := s.Summarizer.Summarize(ctx, texts, q.MaxTokens)
	if err != nil {
		return nil, graph.Wrap(graph.EUNAVAILABLE, err, "the summary could not be written; retry later")
	}
	if summary == "" {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "the summary came back empty; retry later")
	}
	written, err := s.writeDistilled(ctx, c, q.AgentID, space, SourceCompaction, read, []distilled{{text: summary}})
	if err != nil {
		return nil, err
	}
	return written[0], nil
}

// home reports whether e lies in its agent's private or public space: what a derived
// memory of the agent's private space may draw on, being no more visible than either.
func home(c Call, e *graph.Episode) bool {
	return e.GroupID == c.P.Org.Private(e.AgentID).GroupID() || e.GroupID == c.P.Org.Public(e.AgentID).GroupID()
}

// distilledSpace is where a memory derived from sources lands, never more visible than
// the least visible of them: agent's private space when they all lie at home (its
// private or public space); the one space they all lie in otherwise (a team's, the
// owner's shared space, whose readers the private space's might not be), which c must
// be able to write (an audited EFORBIDDEN otherwise, as for sources in several such
// spaces).
func (s *Service) distilledSpace(ctx context.Context, c Call, agent string, sources []*graph.Episode) (graph.Space, error) {
	apart := "" // the one space other than home the sources lie in
	if !home(c, sources[0]) {
		apart = sources[0].GroupID
	}
	for _, e := range sources {
		if (apart == "" && home(c, e)) || e.GroupID == apart {
			continue
		}
		return graph.Space{}, s.deny(ctx, c, e.UUID, e.GroupID, "a derived memory lands where all its sources lie, or in the agent's "+
			"private space for memories of its private and public spaces alone; memory "+e.UUID+" lies apart from the others")
	}
	if apart == "" {
		return c.P.Org.Private(agent), nil
	}
	space, _ := graph.ParseGroupID(apart)
	if d := s.Auth.Write(c.P, agent, space); d.Effect != access.Allow {
		return graph.Space{}, s.deny(ctx, c, agent, apart, "a derived memory of memories of "+apart+" is written there: "+d.Reason)
	}
	return space, nil
}

// distilling checks a compaction or reflection of agent by c before anything is read:
// the agent exists, c may distil it (its owner, where private memories are allowed;
// not a delegate, which may write the private space; an audited EFORBIDDEN
// otherwise), and the budget is in bounds; it returns the budget (0: the default).
func (s *Service) distilling(ctx context.Context, c Call, agent string, maxTokens int, what string) (int, error) {
	if maxTokens == 0 {
		maxTokens = CompactTokensDefault
	}
	if maxTokens < compactTokensMin || maxTokens > compactTokensMax {
		return 0, graph.Errorf(graph.EINVALID, "max_tokens must be from %d to %d", compactTokensMin, compactTokensMax)
	}
	if _, err := s.Dir.GetAgent(ctx, c.P.Org, agent); err != nil {
		return 0, err
	}
	private := c.P.Org.Private(agent)
	if d := s.Auth.Distil(c.P, agent); d.Effect != access.Allow {
		return 0, s.deny(ctx, c, agent, private.GroupID(), "a "+what+" is written to the agent's private space: "+d.Reason)
	}
	return maxTokens, nil
}

// distilled is one memory a compaction or reflection writes.
type distilled struct {
	text string
	tags []string
}

// writeDistilled stores memories of agent in space with source_description source,
// derived from the memories read. Each expires when the first of them does: what they
// said is kept no longer than they are.
func (s *Service) writeDistilled(ctx context.Context, c Call, agent string, space graph.Space, source string, read []*graph.Episode, ds []distilled) ([]*graph.Episode, error) {
	ids := make([]string, len(read))
	var expires *time.Time
	for i, e := range read {
		ids[i] = e.UUID
		if e.ExpiresAt != nil && (expires == nil || e.ExpiresAt.Before(*expires)) {
			expires = e.ExpiresAt
		}
	}
	var eps []*graph.Episode
	now := s.Now().UTC()
	for i, d := range ds {
		m := NewMemory{AgentID: agent, Text: d.text, SourceDescription: source, Tags: d.tags}
		e := s.newEpisode(c, &m, space, d.text, now.Add(time.Duration(i)))
		e.DerivedFrom, e.ExpiresAt = ids, expires
		eps = append(eps, e)
	}
	var out []*graph.Episode
	for _, res := range s.Mem.CreateEpisodes(ctx, eps) {
		if res.Err != nil {
			return nil, res.Err
		}
		out = append(out, res.Episode)
	}
	return out, nil
}

// compacted reads the memories a compaction summarizes, oldest first (by reference
// time): the agent's own words for c (OwnWords), named, or since a time from its
// private and public spaces.
func (s *Service) compacted(ctx context.Context, c Call, q CompactQuery) ([]*graph.Episode, error) {
	vis := s.agentView(c, q.AgentID)
	var out []*graph.Episode
	if q.Since == nil {
		seen := map[string]bool{}
		for _, id := range q.EpisodeIDs {
			if err := checkUUID(id); err != nil {
				return nil, err
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			e, err := s.Mem.GetEpisode(ctx, id, vis)
			if err != nil {
				return nil, err
			}
			if e.AgentID != q.AgentID {
				// Another agent's memory the requester reads (a team's): not this agent's.
				return nil, graph.Errorf(graph.ENOTFOUND, "memory not found")
			}
			if !e.OwnWords(c.P.ID) {
				return nil, s.deny(ctx, c, e.UUID, e.GroupID, notOwnWords(e.UUID, "a compaction draws"))
			}
			out = append(out, e)
		}
	} else {
		page := graph.PageRequest{Limit: s.Limits.PageSizeMax}
		for len(out) < compactMaxMemories {
			p, err := s.Mem.ListEpisodes(ctx, vis, q.AgentID, page)
			if err != nil {
				return nil, err
			}
			for _, e := range p.Episodes {
				if e.CreatedAt.Before(*q.Since) || len(out) == compactMaxMemories {
					p.HasMore = false
					break
				}
				if e.OwnWords(c.P.ID) && home(c, e) {
					out = append(out, e)
				}
			}
			if page.Cursor = p.NextCursor; !p.HasMore {
				break
			}
		}
	}
	// Oldest first, as they happened.
	slices.SortStableFunc(out, func(a, b *graph.Episode) int {
		return cmp.Or(a.ValidAt.Compare(b.ValidAt), a.CreatedAt.Compare(b.CreatedAt))
	})
	return out, nil
}

// notOwnWords is the reason a memory is refused as the source of a derived memory, or
// a derived memory's move for that source: what uses the memory, then why.
func notOwnWords(id, what string) string {
	return what + " only on the agent's own words, and memory " + id +
		" is not: another requester wrote or changed it, or the agent's former owner did"
}

// lineage is what a derived memory was derived from, to the first memory: each source
// still in its agent's view for c, by id (Found), and the ids of them all (IDs).
// Deeper than maxLineage memories, it is Unknown.
type lineage struct {
	Found   map[string]*graph.Episode
	IDs     []string
	Unknown bool
}

// maxLineage bounds the memories a derived memory's move is judged against.
const maxLineage = 1000

// sources reads the lineage of e: its sources, theirs when they are derived memories
// themselves (a compaction of a compaction), and so on, as c reaches them.
func (s *Service) sources(ctx context.Context, c Call, e *graph.Episode) (lineage, error) {
	l := lineage{Found: map[string]*graph.Episode{}}
	seen := map[string]bool{e.UUID: true}
	next := e.DerivedFrom
	vis := s.agentView(c, e.AgentID)
	for len(next) > 0 {
		var ask []string
		for _, id := range next {
			if !seen[id] {
				seen[id] = true
				ask = append(ask, id)
			}
		}
		if len(l.IDs)+len(ask) > maxLineage {
			l.Unknown = true
			return l, nil
		}
		l.IDs = append(l.IDs, ask...)
		found, err := s.Mem.GetEpisodes(ctx, ask, vis)
		if err != nil {
			return l, err
		}
		next = nil
		for _, src := range found {
			l.Found[src.UUID] = src
			next = append(next, src.DerivedFrom...)
		}
	}
	return l, nil
}

// sourcesAllow judges a derived memory's move or copy to another space against its
// sources (read by sources), not its author: it is allowed only while every memory of
// its lineage is still there for c and each of them would be allowed the same (may,
// for one source, returns why not, or ""). A source that is gone, or out of c's
// reach, refuses it: what it said can no longer be judged, so the derived memory stays
// where it is. It returns the reason of a refusal, "" when allowed.
func sourcesAllow(e *graph.Episode, l lineage, may func(src *graph.Episode) string) string {
	if l.Unknown || (len(e.DerivedFrom) > 0 && len(l.IDs) == 0) {
		return "memory " + e.UUID + " was derived from more than " + fmt.Sprint(maxLineage) + " memories, or from memories not read: its sources cannot all be judged"
	}
	for _, id := range l.IDs {
		src := l.Found[id]
		if src == nil {
			return "memory " + e.UUID + " was derived from memory " + id + ", which is gone or out of reach: a derived memory moves only with its sources"
		}
		if reason := may(src); reason != "" {
			return "memory " + e.UUID + " was derived from memory " + id + ", which may not go there: " + reason
		}
	}
	return ""
}

// ReflectQuery asks an agent's owner's reflection on what the agent wrote since a
// time (the newest compactMaxMemories; default: the last day).
type ReflectQuery struct {
	AgentID   string
	Since     *time.Time
	MaxTokens int // 0: CompactTokensDefault
}

// Reflect distills an agent's recent memories in its own words (OwnWords) of its
// private and public spaces (not earlier reflections or compactions) and the current
// facts they stated into a summary memory
// and up to a few rule memories of the agent's private space (source_description
// reflection, tags reflection and summary or rule, derived_from the memories read),
// within max_tokens together: one LLM call, or the offline summarizer. Only who may
// write that space, the agent's owner, may ask (an audited EFORBIDDEN otherwise); a
// team or the global space gets a reflection by promotion.
func (s *Service) Reflect(ctx context.Context, c Call, q ReflectQuery) (_ []*graph.Episode, err error) {
	ctx, end := s.span(ctx, "Reflect", c)
	defer func() { end(err) }()
	if err := graph.CheckID("agent_id", q.AgentID); err != nil {
		return nil, err
	}
	if q.Since == nil {
		day := s.Now().Add(-24 * time.Hour)
		q.Since = &day
	}
	if q.MaxTokens, err = s.distilling(ctx, c, q.AgentID, q.MaxTokens, SourceReflection); err != nil {
		return nil, err
	}
	read, err := s.compacted(ctx, c, CompactQuery{AgentID: q.AgentID, Since: q.Since})
	if err != nil {
		return nil, err
	}
	var texts, ids []string
	var sources []*graph.Episode
	spaces := map[string]bool{}
	for _, e := range read {
		if e.SourceDescription != SourceReflection && e.SourceDescription != SourceCompaction {
			texts, ids, sources = append(texts, e.Content), append(ids, e.UUID), append(sources, e)
			spaces[e.GroupID] = true
		}
	}
	if len(texts) == 0 {
		return nil, graph.Errorf(graph.EINVALID, "no memories in the agent's own words to reflect on since %s", q.Since.UTC().Format(time.RFC3339))
	}
	facts, err := s.statedBy(ctx, graph.Visible{GroupIDs: slices.Sorted(maps.Keys(spaces)), Org: c.P.Org}, ids)
	if err != nil {
		return nil, err
	}
	summary, rules, err := s.Summarizer.Reflect(ctx, texts, facts, q.MaxTokens)
	if err != nil {
		return nil, graph.Wrap(graph.EUNAVAILABLE, err, "the reflection could not be written; retry later")
	}
	if summary == "" {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "the reflection came back empty; retry later")
	}
	out := []distilled{{text: summary, tags: []string{SourceReflection, "summary"}}}
	for _, r := range rules {
		out = append(out, distilled{text: r, tags: []string{SourceReflection, "rule"}})
	}
	return s.writeDistilled(ctx, c, q.AgentID, c.P.Org.Private(q.AgentID), SourceReflection, sources, out)
}

// statedBy returns the newest current facts of vis (at most reflectFacts, read from at
// most reflectFactPages pages) that one of the memories ids stated first: a fact's
// words are those of the memory that first stated it (graph.Fact.Episodes), so a
// reflection reads no fact another memory worded.
func (s *Service) statedBy(ctx context.Context, vis graph.Visible, ids []string) ([]string, error) {
	var facts []string
	page := graph.PageRequest{Limit: s.Limits.PageSizeMax}
	for range reflectFactPages {
		p, err := s.Find.Facts(ctx, vis, graph.TypeFilter{}, page)
		if err != nil {
			return nil, err
		}
		for _, h := range p.Facts {
			f := h.Fact
			if f.InvalidAt == nil && f.ExpiredAt == nil && len(f.Episodes) > 0 && slices.Contains(ids, f.Episodes[0]) {
				if facts = append(facts, f.Fact); len(facts) == reflectFacts {
					return facts, nil
				}
			}
		}
		if page.Cursor = p.NextCursor; !p.HasMore {
			break
		}
	}
	return facts, nil
}

// A reflection reads the newest reflectFacts facts its memories stated, from at most
// reflectFactPages pages of its spaces' facts.
const (
	reflectFacts     = 50
	reflectFactPages = 4
)
