package service

import (
	"context"
	"fmt"
	"slices"
	"strconv"

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
func (s *Service) Update(ctx context.Context, c Call, id string, p Patch) (*graph.Episode, error) {
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
	updated, err := s.Mem.UpdateEpisode(ctx, id, s.Auth.Visible(c.P), func(e *graph.Episode) (*graph.Episode, *graph.AuditEvent, error) {
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
		content := renderContent(&m)
		rule := s.classify(space, m.AgentID, content)
		if rule != "" {
			space = graph.PrivateSpace(m.AgentID)
		}
		ev := s.event(c, graph.AuditUpdated, e.UUID, e.GroupID, fmt.Sprintf("version %d", e.Version+1))
		if space.GroupID() != e.GroupID {
			if d := s.Auth.Write(c.P, e.AgentID, space); d.Effect != access.Allow {
				return nil, nil, forbid(e.UUID, space.GroupID(), "only the memory's creator may move it, to a space it may write: "+d.Reason)
			}
			ev = s.event(c, graph.AuditVisibilityChanged, e.UUID, space.GroupID(),
				fmt.Sprintf("version %d moved from %s", e.Version+1, e.GroupID))
		}
		if s.Limits.RefuseCredentials {
			if err := refuseCredentials(&m, content); err != nil {
				return nil, nil, err
			}
		}
		next := s.newEpisode(c, &m, space, content)
		next.UUID, next.CreatedAt, next.ValidAt, next.RequesterID, next.HostKey = e.UUID, e.CreatedAt, e.ValidAt, e.RequesterID, e.HostKey
		next.PromotedFrom, next.PromotedFromGroup, next.PromotedBy, next.PromotedAt = e.PromotedFrom, e.PromotedFromGroup, e.PromotedBy, e.PromotedAt
		next.DerivedFrom = e.DerivedFrom
		next.VisibilityRule = rule
		if rule == "" && space.GroupID() == e.GroupID {
			next.VisibilityRule = e.VisibilityRule
		}
		now := next.CreatedAt
		next.CreatedAt, next.Version, next.UpdatedAt, next.UpdatedBy = e.CreatedAt, e.Version+1, &now, c.P.ID
		if content == e.Content && space.GroupID() == e.GroupID {
			next.Status, next.Attempts, next.LastError = e.Status, e.Attempts, e.LastError
		}
		if space.Kind == graph.SpacePublic && space.GroupID() != e.GroupID {
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
	s.provenance(c, updated)
	return updated, nil
}

// apply overwrites m's fields with the patch's given ones.
func (p Patch) apply(m NewMemory) NewMemory {
	v := p.Memory
	if p.Given["messages"] {
		m.Text, m.Messages, m.Source = v.Text, v.Messages, ""
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
		Tags: e.Tags, Priority: e.Priority, ExpiresAt: e.ExpiresAt, Confidence: e.Confidence}
	if e.Messages == nil {
		m.Text = e.Content
	}
	return m
}

// Versions returns a memory the caller can see and the versions updates replaced,
// newest first; ENOTFOUND otherwise.
func (s *Service) Versions(ctx context.Context, c Call, id string) (*graph.Episode, []graph.Version, error) {
	if err := checkUUID(id); err != nil {
		return nil, nil, err
	}
	e, versions, err := s.Mem.Versions(ctx, id, s.Auth.Visible(c.P))
	if err != nil {
		return nil, nil, err
	}
	s.provenance(c, e)
	for _, v := range versions {
		s.provenance(c, v.Memory)
	}
	return e, versions, nil
}
