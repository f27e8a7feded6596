package service

import (
	"context"
	"strings"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// SetAgentTypes narrows the entity and edge types extraction uses in the agent's
// private and public spaces to those named (of the deployment's: Ontology; nil: all
// of them, again), for the memories extracted from then on, and audits it
// (types_changed). Only the agent's owner
// may (ManageAgent). EINVALID for a name the deployment does not declare; ECONFLICT
// when the agent was erased and made again, or given to another owner, while the
// request ran (the types are never set on an agent the decision did not read).
func (s *Service) SetAgentTypes(ctx context.Context, c Call, agent string, t graph.SpaceTypes) (err error) {
	ctx, end := s.span(ctx, "SetAgentTypes", c)
	defer func() { end(err) }()
	if err := s.checkTypes(t); err != nil {
		return err
	}
	a, err := s.manageable(ctx, c, agent)
	if err != nil {
		return err
	}
	space := c.P.Org.Private(agent)
	return s.Dir.SetSpaceTypes(ctx, space, graph.TypesGuard{CreatedAt: a.CreatedAt, Owner: a.OwnerID}, t,
		s.event(c, graph.AuditTypesChanged, agent, space.GroupID(), typesReason(t)))
}

// SetTeamTypes is SetAgentTypes for a team's space: a writer of the team may.
// ENOTFOUND for a caller GetTeam would not show the team; an audited EFORBIDDEN for
// a member who may not write; ECONFLICT for a team dissolved and made again while
// the request ran.
func (s *Service) SetTeamTypes(ctx context.Context, c Call, team string, t graph.SpaceTypes) (err error) {
	ctx, end := s.span(ctx, "SetTeamTypes", c)
	defer func() { end(err) }()
	if err := s.checkTypes(t); err != nil {
		return err
	}
	got, err := s.GetTeam(ctx, c, team)
	if err != nil {
		return err
	}
	space := c.P.Org.Team(team)
	if d := s.Auth.Modify(c.P, space); d.Effect != access.Allow {
		return s.deny(ctx, c, team, space.GroupID(), d.Reason)
	}
	return s.Dir.SetSpaceTypes(ctx, space, graph.TypesGuard{CreatedAt: got.CreatedAt}, t,
		s.event(c, graph.AuditTypesChanged, team, space.GroupID(), typesReason(t)))
}

// typesReason is what a types_changed event says was set.
func typesReason(t graph.SpaceTypes) string {
	names := func(l []string) string {
		if l == nil {
			return "the deployment's"
		}
		return "[" + strings.Join(l, ", ") + "]"
	}
	return "entity_types " + names(t.EntityTypes) + "; edge_types " + names(t.EdgeTypes)
}

// checkTypes refuses a space's types that are not the deployment's, or too many.
func (s *Service) checkTypes(t graph.SpaceTypes) error {
	if len(t.EntityTypes) > graph.MaxSpaceTypes || len(t.EdgeTypes) > graph.MaxSpaceTypes {
		return graph.Errorf(graph.EINVALID, "at most %d entity_types and %d edge_types", graph.MaxSpaceTypes, graph.MaxSpaceTypes)
	}
	_, err := s.Ontology.Narrow(t.EntityTypes, t.EdgeTypes)
	return err
}
