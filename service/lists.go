package service

import (
	"context"
	"unicode"
	"unicode/utf8"

	"github.com/memgate/memgate/graph"
)

// AgentList asks for a page of agents: the caller's own (owned, or shared with it by a
// grant in force), or, for an admin host, every agent (All) or one owner's (Owner).
type AgentList struct {
	All   bool
	Owner string
	Page  graph.PageRequest
}

// ListedAgent is an agent as GetAgent shows it to the caller, with the caller's
// relation to it (graph.RelationOwner, RelationShared, or RelationNone in an admin's
// list).
type ListedAgent struct {
	AgentView
	Relation string
}

// AgentPage is one page of agents, newest first.
type AgentPage struct {
	Agents     []ListedAgent
	NextCursor string
	HasMore    bool
}

// ListAgents lists agents newest first, each as GetAgent shows it to the caller, so a
// share holder sees no more of an agent in the list than by id. All and Owner are for
// admin hosts: from any other they are an audited EFORBIDDEN.
func (s *Service) ListAgents(ctx context.Context, c Call, q AgentList) (_ AgentPage, err error) {
	ctx, end := s.span(ctx, "ListAgents", c)
	defer func() { end(err) }()
	limit, err := s.pageSize(q.Page.Limit)
	if err != nil {
		return AgentPage{}, err
	}
	q.Page.Limit = limit
	if q.Owner != "" {
		if err := graph.CheckID("owner", q.Owner); err != nil {
			return AgentPage{}, err
		}
	}
	if q.All || q.Owner != "" {
		if err := s.admin(ctx, c, "agents"); err != nil {
			return AgentPage{}, err
		}
	}
	page, err := s.Dir.ListAgents(ctx, graph.AgentQuery{Org: c.P.Org, Requester: c.P.ID, Owner: q.Owner, All: q.All, Page: q.Page})
	if err != nil {
		return AgentPage{}, err
	}
	out := AgentPage{NextCursor: page.NextCursor, HasMore: page.HasMore}
	for _, l := range page.Agents {
		out.Agents = append(out.Agents, ListedAgent{AgentView: s.shownAgent(c, l.Agent), Relation: l.Relation})
	}
	return out, nil
}

// ListTeams lists the teams the caller is a member or the owner of, newest first, each
// with the caller's role in it; all, for an admin host, lists every team (from any
// other host an audited EFORBIDDEN).
func (s *Service) ListTeams(ctx context.Context, c Call, all bool, page graph.PageRequest) (_ graph.TeamPage, err error) {
	ctx, end := s.span(ctx, "ListTeams", c)
	defer func() { end(err) }()
	limit, err := s.pageSize(page.Limit)
	if err != nil {
		return graph.TeamPage{}, err
	}
	page.Limit = limit
	if all {
		if err := s.admin(ctx, c, "teams"); err != nil {
			return graph.TeamPage{}, err
		}
	}
	return s.Dir.ListTeams(ctx, graph.TeamQuery{Org: c.P.Org, Requester: c.P.ID, All: all, Page: page})
}

// EntityList asks for a page of the entities the caller sees for an agent: of the
// type Type (one of the deployment's entity types; any when ""), of the types and
// with the attributes Types names (as search's), whose name starts with NamePrefix
// compared without case ("" for any).
type EntityList struct {
	AgentID    string
	Type       string
	Types      graph.TypeQuery
	NamePrefix string
	Page       graph.PageRequest
}

// ListEntities lists the entities of every space the caller sees for an agent (the
// spaces ListFacts lists the facts of: its private and public spaces, the owner's
// shared space for its owner, the caller's teams, global), by name compared without
// case, then id. An agent that does not exist answers ENOTFOUND, as ListFacts does;
// one whose spaces the caller cannot read lists what it sees of it (its public space).
func (s *Service) ListEntities(ctx context.Context, c Call, q EntityList) (_ graph.EntityPage, err error) {
	ctx, end := s.span(ctx, "ListEntities", c)
	defer func() { end(err) }()
	if q.Type != "" {
		if len(q.Types.EntityTypes) > 0 {
			return graph.EntityPage{}, graph.Errorf(graph.EINVALID, "type and entity_types exclude each other")
		}
		q.Types.EntityTypes = []string{q.Type}
	}
	if len(q.Types.EdgeTypes) > 0 || len(q.Types.EdgeAttributes) > 0 {
		return graph.EntityPage{}, graph.Errorf(graph.EINVALID, "entities take entity_types and attributes; edge_types and edge_attributes select facts")
	}
	f, err := s.Ontology.Filter(q.Types)
	if err != nil {
		return graph.EntityPage{}, err
	}
	if err := checkNamePrefix(q.NamePrefix); err != nil {
		return graph.EntityPage{}, err
	}
	if err := s.agentListing(ctx, c, q.AgentID, &q.Page); err != nil {
		return graph.EntityPage{}, err
	}
	return s.Find.Entities(ctx, s.agentView(c, q.AgentID), graph.EntityFilter{TypeFilter: f, NamePrefix: q.NamePrefix}, q.Page)
}

// checkNamePrefix refuses a name prefix no entity name can start with: longer than a
// name may be (graph.MaxEntityNameRunes), not UTF-8, or with control characters
// (extraction takes them out of names).
func checkNamePrefix(p string) error {
	switch {
	case !utf8.ValidString(p):
		return graph.Errorf(graph.EINVALID, "name_prefix must be UTF-8 text")
	case utf8.RuneCountInString(p) > graph.MaxEntityNameRunes:
		return graph.Errorf(graph.EINVALID, "name_prefix is longer than %d characters, the longest an entity's name may be", graph.MaxEntityNameRunes)
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return graph.Errorf(graph.EINVALID, "name_prefix must not hold control characters")
		}
	}
	return nil
}
