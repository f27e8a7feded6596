package service

import (
	"context"

	"github.com/google/uuid"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// ListConflicts lists the open conflicts (memory.conflicts: review) of every space
// the caller sees for an agent, newest first, each with its two facts. An agent that
// does not exist answers ENOTFOUND.
func (s *Service) ListConflicts(ctx context.Context, c Call, agentID string, page graph.PageRequest) (_ graph.ConflictPage, err error) {
	ctx, end := s.span(ctx, "ListConflicts", c)
	defer func() { end(err) }()
	if err := s.agentListing(ctx, c, agentID, &page); err != nil {
		return graph.ConflictPage{}, err
	}
	return s.Find.Conflicts(ctx, s.agentView(c, agentID), page)
}

// ResolveConflict resolves an open conflict as keep says (graph.KeepOld, KeepNew or
// KeepBoth), by a caller who may change its space (the delete rule). ENOTFOUND when the
// caller cannot see it; an audited EFORBIDDEN when it can see but not change it;
// ECONFLICT when it is resolved already.
func (s *Service) ResolveConflict(ctx context.Context, c Call, id, keep string) (_ *graph.ConflictHit, err error) {
	ctx, end := s.span(ctx, "ResolveConflict", c)
	defer func() { end(err) }()
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return nil, graph.Errorf(graph.ENOTFOUND, "conflict not found")
	}
	if keep != graph.KeepOld && keep != graph.KeepNew && keep != graph.KeepBoth {
		return nil, graph.Errorf(graph.EINVALID, "keep must be old, new or both")
	}
	hit, err := s.Mem.ResolveConflict(ctx, id, s.Auth.Visible(c.P), keep, c.P.ID, func(cf *graph.Conflict) (*graph.AuditEvent, error) {
		space, ok := graph.ParseGroupID(cf.GroupID)
		if !ok {
			return nil, graph.Errorf(graph.ENOTFOUND, "conflict not found")
		}
		if d := s.Auth.Modify(c.P, space); d.Effect != access.Allow {
			return nil, forbid(cf.UUID, cf.GroupID, d.Reason)
		}
		return s.event(c, graph.AuditConflictResolved, cf.UUID, cf.GroupID, "keep "+keep), nil
	})
	if err != nil {
		return nil, s.recordIfForbidden(ctx, c, err)
	}
	return hit, nil
}
