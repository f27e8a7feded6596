package service

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// Summarizer writes one summary of texts (oldest first) of at most maxBytes bytes:
// the LLM, or without one the offline extractive summarizer.
type Summarizer interface {
	Summarize(ctx context.Context, texts []string, maxBytes int) (string, error)
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

// SourceCompaction is a compaction's source_description.
const SourceCompaction = "compaction"

// Compact summarizes memories the caller sees for an agent within max_tokens and
// stores the summary as a memory of the agent's private space (source_description
// compaction, derived_from the memories read), queued for extraction like any other.
// The caller must be able to write that space (an audited EFORBIDDEN otherwise); a
// named memory it cannot see, or that is not in the agent's view, is ENOTFOUND.
// The budget is in bytes (see extract.Cut): at most max_tokens tokens for any
// byte-level BPE tokenizer.
func (s *Service) Compact(ctx context.Context, c Call, q CompactQuery) (*graph.Episode, error) {
	if err := graph.CheckID("agent_id", q.AgentID); err != nil {
		return nil, err
	}
	switch {
	case (len(q.EpisodeIDs) > 0) == (q.Since != nil):
		return nil, graph.Errorf(graph.EINVALID, "give episode_ids or since, not both")
	case len(q.EpisodeIDs) > compactMaxMemories:
		return nil, graph.Errorf(graph.EINVALID, "at most %d episode_ids", compactMaxMemories)
	case q.MaxTokens == 0:
		q.MaxTokens = CompactTokensDefault
	case q.MaxTokens < compactTokensMin || q.MaxTokens > compactTokensMax:
		return nil, graph.Errorf(graph.EINVALID, "max_tokens must be from %d to %d", compactTokensMin, compactTokensMax)
	}
	if _, err := s.Dir.GetAgent(ctx, q.AgentID); err != nil {
		return nil, err
	}
	d := s.Auth.Write(c.P, q.AgentID, graph.PrivateSpace(q.AgentID))
	if d.Effect != access.Allow {
		return nil, s.deny(ctx, c, q.AgentID, graph.PrivateSpace(q.AgentID).GroupID(), "a compaction is written to the agent's private space: "+d.Reason)
	}
	read, err := s.compacted(ctx, c, q)
	if err != nil {
		return nil, err
	}
	if len(read) == 0 {
		return nil, graph.Errorf(graph.EINVALID, "no memories of the agent to compact")
	}
	texts, ids := make([]string, len(read)), make([]string, len(read))
	for i, e := range read {
		texts[i], ids[i] = e.Content, e.UUID
	}
	summary, err := s.Summarizer.Summarize(ctx, texts, q.MaxTokens)
	if err != nil {
		return nil, graph.Wrap(graph.EUNAVAILABLE, err, "the summary could not be written; retry later")
	}
	if summary == "" {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "the summary came back empty; retry later")
	}
	m := NewMemory{AgentID: q.AgentID, Text: summary, SourceDescription: SourceCompaction}
	e := s.newEpisode(c, &m, graph.PrivateSpace(q.AgentID), summary)
	e.DerivedFrom = ids
	res := s.Mem.CreateEpisodes(ctx, []*graph.Episode{e})[0]
	return res.Episode, res.Err
}

// compacted reads the memories a compaction summarizes, oldest first (by reference
// time).
func (s *Service) compacted(ctx context.Context, c Call, q CompactQuery) ([]*graph.Episode, error) {
	vis := s.agentView(c, q.AgentID)
	var out []*graph.Episode
	if q.Since == nil {
		seen := map[string]bool{}
		for _, id := range q.EpisodeIDs {
			if err := checkUUID(id); err != nil {
				return nil, err
			}
			e, err := s.Mem.GetEpisode(ctx, id, vis)
			if err != nil {
				return nil, err
			}
			if !seen[id] {
				seen[id] = true
				out = append(out, e)
			}
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
				out = append(out, e)
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
