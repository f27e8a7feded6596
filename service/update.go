package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// Patch is a change to a memory: the fields Given (by their API names: messages,
// tags, priority, confidence, expires_at, metadata, visibility, team) take their
// values from Memory; a field given as null is cleared. IfMatch, when not empty, is
// the version the client read: the update applies only if it is still current.
type Patch struct {
	Given   map[string]bool
	Memory  NewMemory
	IfMatch string
}

// patchable are the fields a Patch may give.
var patchable = []string{"messages", "tags", "priority", "confidence", "expires_at", "metadata", "visibility", "team"}

// Update changes a memory in place and keeps the version it replaces. A writer of its
// space may change its content and attributes; only its creator (a request acting for
// the agent that wrote it, which must be able to write the target) may move it to
// another space, and a visibility rule matching new content moves it to the private
// space as it would a new memory. A content change or a move queues it for extraction
// again. ENOTFOUND when the caller cannot see it; an audited EFORBIDDEN when it may
// not make the change; EPRECONDITION when IfMatch is not the current version.
func (s *Service) Update(ctx context.Context, c Call, id string, p Patch) (_ *graph.Episode, err error) {
	ctx, end := s.span(ctx, "Update", c)
	defer func() { end(err) }()
	if err := checkUUID(id); err != nil {
		return nil, err
	}
	if len(p.Given) == 0 {
		return nil, graph.Errorf(graph.EINVALID, "nothing to change: give one or more of %v", patchable)
	}
	for f := range p.Given {
		if !slices.Contains(patchable, f) {
			return nil, graph.Errorf(graph.EINVALID, "%s cannot be changed; a patch may give %v", f, patchable)
		}
	}
	var quota *graph.Episode
	keep := s.maxVersions()
	vis := s.Auth.Visible(c.P)
	// A derived memory's move out of its agent's private space, where it was written,
	// is judged against its sources (sourcesAllow), read before the update's
	// transaction when the patch may move it.
	var sources lineage
	if p.Given["visibility"] || p.Given["team"] || p.Given["expires_at"] {
		e, err := s.Mem.GetEpisode(ctx, id, vis)
		if err != nil {
			return nil, err
		}
		if sources, err = s.sources(ctx, c, e); err != nil {
			return nil, err
		}
	}
	updated, err := s.Mem.UpdateEpisode(ctx, id, vis, keep, func(e *graph.Episode, earlier []graph.Version) (*graph.Episode, *graph.AuditEvent, error) {
		if d := s.Auth.Modify(c.P, e.Space()); d.Effect != access.Allow {
			return nil, nil, forbid(e.UUID, e.GroupID, d.Reason)
		}
		if p.IfMatch != "" && p.IfMatch != "*" && p.IfMatch != strconv.Itoa(e.Version) {
			return nil, nil, graph.Errorf(graph.EPRECONDITION,
				"the memory is at version %d, not %s: read it again and reapply the change", e.Version, p.IfMatch)
		}
		m := p.apply(memoryOf(e))
		space, err := s.validate(c, &m)
		if err != nil {
			return nil, nil, err
		}
		// A derived memory is kept no longer than its sources: its expiry may be brought
		// forward (set, when it had none), or moved up to the first of theirs.
		sooner := m.ExpiresAt != nil && (e.ExpiresAt == nil || !m.ExpiresAt.After(*e.ExpiresAt))
		if p.Given["expires_at"] && len(e.DerivedFrom) > 0 && !sooner {
			if reason := sourcesAllow(e, sources, func(src *graph.Episode) string {
				if src.ExpiresAt != nil && (m.ExpiresAt == nil || m.ExpiresAt.After(*src.ExpiresAt)) {
					return "it expires at " + src.ExpiresAt.UTC().Format(time.RFC3339)
				}
				return ""
			}); reason != "" {
				return nil, nil, graph.Errorf(graph.EINVALID, "expires_at: a derived memory is kept no longer than its sources: %s", reason)
			}
		}
		content := renderContent(&m)
		rule := s.classify(space, m.AgentID, graph.Texts(m.Source, m.SourceDescription, content))
		if rule != "" {
			space = c.P.Org.Private(m.AgentID)
		}
		next := s.newEpisode(c, &m, space, content, s.Now().UTC())
		// A memory stays its agent's own only while no one but the owner whose words it
		// holds changes it; a change by anyone else (a former owner's memory changed by
		// the new one included) makes it so for good (its words stay in the versions).
		next.ContentAgent = ""
		if e.OwnWords(c.P.ID) && c.P.Owns[e.AgentID] {
			next.ContentAgent = e.ContentAgent
		}
		ev := s.event(c, graph.AuditUpdated, e.UUID, e.GroupID, fmt.Sprintf("version %d", e.Version+1))
		if space.GroupID() != e.GroupID {
			if next.ContentAgent == "" {
				return nil, nil, forbid(e.UUID, space.GroupID(),
					"only a memory in its agent's own words moves: a promoted copy, one another requester changed, or one the agent's former owner wrote stays in its space")
			}
			if d := s.Auth.Write(c.P, e.AgentID, space); d.Effect != access.Allow {
				return nil, nil, forbid(e.UUID, space.GroupID(), "only the memory's creator may move it, to a space it may write: "+d.Reason)
			}
			if space != c.P.Org.Private(e.AgentID) {
				if reason := sourcesAllow(e, sources, func(src *graph.Episode) string {
					switch {
					case !src.OwnWords(c.P.ID):
						return notOwnWords(src.UUID, "a derived memory moves")
					case s.classify(space, e.AgentID, graph.Texts(src.Source, src.SourceDescription, src.Content)) != "":
						return "a visibility rule keeps its content out of " + space.GroupID()
					}
					return ""
				}); reason != "" {
					return nil, nil, forbid(e.UUID, space.GroupID(), reason)
				}
			}
			next.DropVersions = s.unmovable(c, space, e, earlier)
			ev = s.event(c, graph.AuditVisibilityChanged, e.UUID, space.GroupID(),
				fmt.Sprintf("version %d moved from %s", e.Version+1, e.GroupID))
			if n := len(next.DropVersions); n > 0 {
				ev.Reason += fmt.Sprintf("; %d earlier versions that may not follow it erased", n)
			}
		}
		if s.Limits.RefuseCredentials {
			if err := refuseCredentials(&m, content); err != nil {
				return nil, nil, err
			}
		}
		next.UUID, next.ValidAt, next.RequesterID, next.HostKey = e.UUID, e.ValidAt, e.RequesterID, e.HostKey
		next.PromotedFrom, next.PromotedFromGroup, next.PromotedBy, next.PromotedAt = e.PromotedFrom, e.PromotedFromGroup, e.PromotedBy, e.PromotedAt
		next.DerivedFrom = e.DerivedFrom
		next.VisibilityRule = rule
		if rule == "" && space.GroupID() == e.GroupID {
			next.VisibilityRule = e.VisibilityRule
		}
		now := next.CreatedAt // the time of this update, which newEpisode gave it
		next.CreatedAt, next.Version, next.UpdatedAt, next.UpdatedBy = e.CreatedAt, e.Version+1, &now, c.P.ID
		if content == e.Content && space.GroupID() == e.GroupID {
			next.Status, next.Attempts, next.LastError = e.Status, e.Attempts, e.LastError
			next.TraceParent = e.TraceParent
		} else if next.Status == graph.StatusQueued {
			next.TraceParent = traceParent(ctx) // extracted again: for this update
		} else {
			s.embedUnextracted(ctx, next) // not extracted: embedded here
		}
		// A new public text counts against the quota as a new public memory does.
		if space.Kind == graph.SpacePublic && (space.GroupID() != e.GroupID || content != e.Content) {
			next.PublicQuota, quota = s.Limits.PublicWritesPerDay, next
		}
		return next, ev, nil
	})
	if graph.ErrorCode(err) == graph.EQUOTA {
		return nil, s.quotaExceeded(ctx, c, quota, err)
	}
	if err != nil {
		return nil, s.recordIfForbidden(ctx, c, err)
	}
	if p.Given["expires_at"] && updated.ExpiresAt != nil {
		if err := s.expireDerived(ctx, updated); err != nil {
			return nil, err
		}
	}
	s.provenance(c, updated)
	return updated, nil
}

// expireDerived brings forward to e's expiry that of every memory derived from e, and
// from those, that would outlive it: what a memory said is kept no longer than it is.
func (s *Service) expireDerived(ctx context.Context, e *graph.Episode) error {
	for ids, n := []string{e.UUID}, 0; len(ids) > 0 && n < maxLineage; n += len(ids) {
		var err error
		if ids, err = s.Mem.ExpireDerived(ctx, e.AgentID, ids, *e.ExpiresAt); err != nil {
			return graph.Wrap(graph.EUNAVAILABLE, err, "the memory's expiry is set, but not yet that of the memories derived from it; send the change again")
		}
	}
	return nil
}

// unmovable are the numbers of the versions of e (e itself, which the move keeps as a
// version, and those earlier) that may not follow it into space: text another
// requester wrote (a memory moves only within its agent's reach, and no one else's
// words enter it), and text a visibility rule keeps out of space, which would
// otherwise be read there in /versions.
func (s *Service) unmovable(c Call, space graph.Space, e *graph.Episode, earlier []graph.Version) []int {
	var drop []int
	for _, v := range append([]*graph.Episode{e}, versionMemories(earlier)...) {
		if !v.OwnWords(c.P.ID) || s.classify(space, e.AgentID, graph.Texts(v.Source, v.SourceDescription, v.Content)) != "" {
			drop = append(drop, v.Version)
		}
	}
	return drop
}

func versionMemories(vs []graph.Version) []*graph.Episode {
	out := make([]*graph.Episode, len(vs))
	for i, v := range vs {
		out[i] = v.Memory
	}
	return out
}

// maxVersions is how many earlier versions a memory keeps.
func (s *Service) maxVersions() int {
	if s.Limits.MaxVersions > 0 {
		return s.Limits.MaxVersions
	}
	return 20
}

// apply overwrites m's fields with the patch's given ones.
func (p Patch) apply(m NewMemory) NewMemory {
	v := p.Memory
	if p.Given["messages"] {
		// The source follows the new content (message for a list, text for a string),
		// but json, which a writer chose for its string, stays while the string is JSON.
		keep := m.Source == graph.SourceJSON && v.Messages == nil && json.Valid([]byte(v.Text))
		m.Text, m.Messages, m.Source = v.Text, v.Messages, ""
		if keep {
			m.Source = graph.SourceJSON
		}
	}
	if p.Given["tags"] {
		m.Tags = v.Tags
	}
	if p.Given["priority"] {
		m.Priority = v.Priority
	}
	if p.Given["confidence"] {
		m.Confidence = v.Confidence
	}
	if p.Given["expires_at"] {
		m.ExpiresAt = v.ExpiresAt
	}
	if p.Given["metadata"] {
		m.Metadata = v.Metadata
	}
	if p.Given["visibility"] {
		m.Visibility, m.Team = v.Visibility, ""
	}
	if p.Given["team"] {
		m.Team = v.Team
	}
	return m
}

// memoryOf is a stored memory as the NewMemory that would write it again.
func memoryOf(e *graph.Episode) NewMemory {
	space := e.Space()
	m := NewMemory{AgentID: e.AgentID, Visibility: string(space.Kind), Team: space.Team, Messages: e.Messages,
		Source: e.Source, SourceDescription: e.SourceDescription, Metadata: e.Metadata, ReferenceTime: &e.ValidAt,
		Tags: e.Tags, Priority: e.Priority, ExpiresAt: e.ExpiresAt, Confidence: e.Confidence, NoExtraction: e.Unextracted,
		ExtractionInstructions: e.ExtractionInstructions}
	if e.Messages == nil {
		m.Text = e.Content
	}
	return m
}

// Versions returns a memory the caller can see and a page of the versions updates
// replaced, newest first; ENOTFOUND otherwise. Who replaced a version is shown only
// to those who may change the memory (and to whoever it was).
func (s *Service) Versions(ctx context.Context, c Call, id string, page graph.PageRequest) (_ *graph.Episode, _ graph.VersionPage, err error) {
	ctx, end := s.span(ctx, "Versions", c)
	defer func() { end(err) }()
	if err := checkUUID(id); err != nil {
		return nil, graph.VersionPage{}, err
	}
	limit, err := s.pageSize(page.Limit)
	if err != nil {
		return nil, graph.VersionPage{}, err
	}
	page.Limit = limit
	e, versions, err := s.Mem.Versions(ctx, id, s.Auth.Visible(c.P), page)
	if err != nil {
		return nil, graph.VersionPage{}, err
	}
	s.provenance(c, e)
	writer := s.Auth.Modify(c.P, e.Space()).Effect == access.Allow
	for i, v := range versions.Versions {
		s.provenance(c, v.Memory)
		if !writer && v.ReplacedBy != c.P.ID {
			versions.Versions[i].ReplacedBy = ""
		}
	}
	return e, versions, nil
}
