package service

import (
	"context"
	"fmt"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// CreateAgent creates an agent owned by the caller, or by owner when an admin host
// names one. ECONFLICT if the id exists.
func (s *Service) CreateAgent(ctx context.Context, c Call, id, owner string) (_ *graph.Agent, err error) {
	ctx, end := s.span(ctx, "CreateAgent", c)
	defer func() { end(err) }()
	if err := graph.CheckID("id", id); err != nil {
		return nil, err
	}
	if owner == "" {
		owner = c.P.ID
	}
	if err := graph.CheckID("owner_id", owner); err != nil {
		return nil, err
	}
	if owner != c.P.ID && !c.P.Host.Admin {
		return nil, s.deny(ctx, c, id, "", "naming another owner needs an admin host key")
	}
	a := &graph.Agent{ID: id, OwnerID: owner, CreatedAt: s.Now().UTC(), Shares: []graph.Share{}, Delegates: []graph.Delegation{}}
	ev := s.event(c, graph.AuditOwnershipChanged, id, "", "created, owner "+owner)
	if err := s.Dir.CreateAgent(ctx, c.P.Org, a, ev); err != nil {
		return nil, err
	}
	return a, nil
}

// AgentView is an agent as one caller may see it: the owner, the shares and the
// delegations only for the owner and admin hosts.
type AgentView struct {
	ID        string
	CreatedAt time.Time
	OwnerID   string
	Shares    []graph.Share      // nil unless the caller may manage the agent
	Delegates []graph.Delegation // nil unless the caller may manage the agent
	Types     *graph.SpaceTypes  // nil unless the caller may manage the agent and its owner chose types
}

// GetAgent returns the agent; every authenticated requester may know an agent exists
// (its public space is readable by all).
func (s *Service) GetAgent(ctx context.Context, c Call, id string) (_ AgentView, err error) {
	ctx, end := s.span(ctx, "GetAgent", c)
	defer func() { end(err) }()
	if err := graph.CheckID("id", id); err != nil {
		return AgentView{}, err
	}
	a, err := s.Dir.GetAgent(ctx, c.P.Org, id)
	if err != nil {
		return AgentView{}, err
	}
	return s.shownAgent(c, a), nil
}

// shownAgent is a as c may see it, by id or in a list: the owner, the shares and the
// delegations and the types chosen for its spaces only when c may manage it (a
// delegate is not shown them).
func (s *Service) shownAgent(c Call, a *graph.Agent) AgentView {
	v := AgentView{ID: a.ID, CreatedAt: a.CreatedAt}
	if s.Auth.ManageAgent(c.P, a).Effect == access.Allow {
		v.OwnerID, v.Shares, v.Delegates, v.Types = a.OwnerID, a.Shares, a.Delegates, a.Types
	}
	return v
}

// Usage sums what extracting the memories of the agent's own spaces (private and
// public) cost, of those created within q's window that exist now (not deleted or
// expired), in one query restricted to those two group_ids. Only who may manage the
// agent may ask (its owner, an admin host of its organization); for anyone else the
// agent is not found (ENOTFOUND, unaudited, as for one that does not exist).
// Memories the agent wrote into a team's, its owner's shared or the global space are
// those spaces', not counted here. EINVALID for a bad id or a window whose since is
// not before its until.
func (s *Service) Usage(ctx context.Context, c Call, q graph.UsageQuery) (graph.Usage, error) {
	if err := q.Validate(); err != nil {
		return graph.Usage{}, err
	}
	a, err := s.Dir.GetAgent(ctx, c.P.Org, q.AgentID)
	if err != nil {
		return graph.Usage{}, err
	}
	if s.Auth.Usage(c.P, a).Effect != access.Allow {
		return graph.Usage{}, graph.Errorf(graph.ENOTFOUND, "agent not found")
	}
	vis := graph.Visible{GroupIDs: []string{c.P.Org.Private(a.ID).GroupID(), c.P.Org.Public(a.ID).GroupID()}, Org: c.P.Org}
	return s.Mem.Usage(ctx, vis, q)
}

// manageable loads an agent and checks the caller may change it.
func (s *Service) manageable(ctx context.Context, c Call, id string) (*graph.Agent, error) {
	if err := graph.CheckID("id", id); err != nil {
		return nil, err
	}
	a, err := s.Dir.GetAgent(ctx, c.P.Org, id)
	if err != nil {
		return nil, err
	}
	if d := s.Auth.ManageAgent(c.P, a); d.Effect != access.Allow {
		return nil, s.deny(ctx, c, id, c.P.Org.Private(id).GroupID(), d.Reason)
	}
	return a, nil
}

// TransferOwner gives the agent to a new owner; shares and delegations granted by the
// old owner end.
func (s *Service) TransferOwner(ctx context.Context, c Call, id, owner string) (err error) {
	ctx, end := s.span(ctx, "TransferOwner", c)
	defer func() { end(err) }()
	if err := graph.CheckID("owner_id", owner); err != nil {
		return err
	}
	a, err := s.manageable(ctx, c, id)
	if err != nil {
		return err
	}
	ev := s.event(c, graph.AuditOwnershipChanged, id, "", "owner "+a.OwnerID+" -> "+owner)
	return s.Dir.SetOwner(ctx, c.P.Org, id, a.OwnerID, owner, ev)
}

// DeleteAgent erases the agent and both of its spaces.
func (s *Service) DeleteAgent(ctx context.Context, c Call, id string) (_ int, err error) {
	ctx, end := s.span(ctx, "DeleteAgent", c)
	defer func() { end(err) }()
	a, err := s.manageable(ctx, c, id)
	if err != nil {
		return 0, err
	}
	ev := s.event(c, graph.AuditDeleted, id, c.P.Org.Private(id).GroupID()+","+c.P.Org.Public(id).GroupID(), "agent erased")
	return s.Dir.DeleteAgent(ctx, c.P.Org, id, a.OwnerID, ev)
}

// Share grants (or revokes) principal read access to the agent's private space; only
// the owner may. A grant with expiresAt stops working from then on.
func (s *Service) Share(ctx context.Context, c Call, agent, principal string, grant bool, expiresAt *time.Time) (err error) {
	ctx, end := s.span(ctx, "Share", c)
	defer func() { end(err) }()
	if err := graph.CheckID("agent", agent); err != nil {
		return err
	}
	if err := graph.CheckID("principal", principal); err != nil {
		return err
	}
	if expiresAt != nil && !expiresAt.After(s.Now()) {
		return graph.Errorf(graph.EINVALID, "expires_at must be in the future")
	}
	a, err := s.Dir.GetAgent(ctx, c.P.Org, agent)
	if err != nil {
		return err
	}
	space := c.P.Org.Private(agent).GroupID()
	if d := s.Auth.Share(c.P, a); d.Effect != access.Allow {
		return s.deny(ctx, c, agent, space, d.Reason)
	}
	kind, reason := graph.AuditShareRevoked, "with "+principal
	if grant {
		kind = graph.AuditShareGranted
	}
	if expiresAt != nil {
		reason += " until " + expiresAt.UTC().Format(time.RFC3339)
	}
	return s.Dir.SetShare(ctx, c.P.Org, agent, principal, grant, expiresAt, s.event(c, kind, agent, space, reason))
}

// Delegate grants principal the right to write the agent's memories in the agent's own
// private and public spaces (role graph.RoleWriter, the only one), until expiresAt
// when it is not nil; role "" revokes it. Only the agent's owner may (not an admin
// host, not a delegate), and not to itself. ENOTFOUND for an agent that does not
// exist; an audited EFORBIDDEN for anyone else; ECONFLICT when the agent changed
// owner meanwhile. Audited as delegate_granted or delegate_revoked.
func (s *Service) Delegate(ctx context.Context, c Call, agent, principal string, role graph.Role, expiresAt *time.Time) (err error) {
	ctx, end := s.span(ctx, "Delegate", c)
	defer func() { end(err) }()
	if err := graph.CheckID("agent", agent); err != nil {
		return err
	}
	if err := graph.CheckID("principal", principal); err != nil {
		return err
	}
	if role != "" && role != graph.RoleWriter {
		return graph.Errorf(graph.EINVALID, "role must be writer")
	}
	if role == "" && expiresAt != nil {
		return graph.Errorf(graph.EINVALID, "revoking a delegation takes no expires_at")
	}
	if expiresAt != nil && !expiresAt.After(s.Now()) {
		return graph.Errorf(graph.EINVALID, "expires_at must be in the future")
	}
	a, err := s.Dir.GetAgent(ctx, c.P.Org, agent)
	if err != nil {
		return err
	}
	spaces := c.P.Org.Private(agent).GroupID() + "," + c.P.Org.Public(agent).GroupID()
	if d := s.Auth.Delegate(c.P, a); d.Effect != access.Allow {
		return s.deny(ctx, c, agent, c.P.Org.Private(agent).GroupID(), d.Reason)
	}
	// Checked once the caller is known to be the owner: before, it would tell anyone
	// who the owner is.
	if principal == a.OwnerID {
		return graph.Errorf(graph.EINVALID, "the agent's owner writes its memories already; delegate to another requester")
	}
	kind, reason := graph.AuditDelegateRevoked, principal
	if role != "" {
		kind, reason = graph.AuditDelegateGranted, principal+" as "+string(role)
	}
	if expiresAt != nil {
		reason += " until " + expiresAt.UTC().Format(time.RFC3339)
	}
	return s.Dir.SetDelegate(ctx, c.P.Org, agent, a.OwnerID, principal, role, expiresAt, s.event(c, kind, agent, spaces, reason))
}

// noteExpiredShare audits a list or search about agent by a requester whose share of
// its private space has lapsed (share_expired, "used after it expired", actor the
// requester): the read goes on without the private space. Only the first such read
// after the lapse is audited, once however many memgate processes serve the requester's
// reads: the grant records that its use was audited in the transaction that writes the
// event. A grant renewed and lapsed again is audited afresh.
//
// The sweeper's share_expired (LapseShares, actor system:expiry-sweeper) is apart from
// this one and does not stand for it: it records that the grant lapsed, once, whether
// or not the former grantee reads again; this one records that the former grantee did
// try to read after it. A lapse has at most one of each, in either order.
func (s *Service) noteExpiredShare(ctx context.Context, c Call, agent string) {
	if !c.P.ExpiredShares[agent] || c.P.SharedWith[agent] || c.P.Owns[agent] {
		return
	}
	ev := s.event(c, graph.AuditShareExpired, agent, c.P.Org.Private(agent).GroupID(), "used after it expired")
	if _, err := s.Dir.AuditExpiredShareUse(ctx, c.P.Org, agent, c.P.ID, ev); err != nil {
		s.Log.WarnContext(ctx, "recording the use of an expired share", "error", err.Error(), "agent", agent)
	}
}

// admin checks the caller's host is an admin one.
func (s *Service) admin(ctx context.Context, c Call, subject string) error {
	if d := s.Auth.Admin(c.P); d.Effect != access.Allow {
		return s.deny(ctx, c, subject, "", d.Reason)
	}
	return nil
}

// CreateTeam creates a team (admin hosts) owned by owner, by default the caller: its
// owner may dissolve it.
func (s *Service) CreateTeam(ctx context.Context, c Call, name, owner string) (err error) {
	ctx, end := s.span(ctx, "CreateTeam", c)
	defer func() { end(err) }()
	if err := graph.CheckID("name", name); err != nil {
		return err
	}
	if owner == "" {
		owner = c.P.ID
	}
	if err := graph.CheckID("owner_id", owner); err != nil {
		return err
	}
	if err := s.admin(ctx, c, name); err != nil {
		return err
	}
	return s.Dir.CreateTeam(ctx, c.P.Org, name, owner, s.event(c, graph.AuditMembershipChanged, name, c.P.Org.Team(name).GroupID(), "team created, owned by "+owner))
}

// GetTeam shows a team to admin hosts, its owner and its members; ENOTFOUND to anyone
// else.
func (s *Service) GetTeam(ctx context.Context, c Call, name string) (_ *graph.Team, err error) {
	ctx, end := s.span(ctx, "GetTeam", c)
	defer func() { end(err) }()
	if err := graph.CheckID("team", name); err != nil {
		return nil, err
	}
	t, err := s.Dir.GetTeam(ctx, c.P.Org, name)
	if err != nil || c.P.Teams[name] != "" || t.OwnerID == c.P.ID || s.Auth.Admin(c.P).Effect == access.Allow {
		return t, err
	}
	return nil, graph.Errorf(graph.ENOTFOUND, "team not found")
}

// DissolveTeam deletes a team (its owner or an admin host): each memory of its space
// goes back to its agent's private space, to be extracted there again, and its
// members lose access at once. With dryRun it only counts what would move. ENOTFOUND
// for a caller GetTeam would not show the team; an audited EFORBIDDEN for a member
// that may not dissolve it.
func (s *Service) DissolveTeam(ctx context.Context, c Call, name string, dryRun bool) (_ graph.Dissolution, err error) {
	ctx, end := s.span(ctx, "DissolveTeam", c)
	defer func() { end(err) }()
	t, err := s.GetTeam(ctx, c, name)
	if err != nil {
		return graph.Dissolution{}, err
	}
	group := c.P.Org.Team(name).GroupID()
	if d := s.Auth.DissolveTeam(c.P, t); d.Effect != access.Allow {
		return graph.Dissolution{}, s.deny(ctx, c, name, group, d.Reason)
	}
	if dryRun {
		return s.Dir.TeamMemories(ctx, c.P.Org, name)
	}
	return s.Dir.DissolveTeam(ctx, c.P.Org, name, func(d graph.Dissolution) *graph.AuditEvent {
		moved := 0
		for _, n := range d.Moved {
			moved += n
		}
		return s.event(c, graph.AuditTeamDissolved, name, group,
			fmt.Sprintf("%d memories back to %d agents' private spaces, %d erased (not their agent's own words, or their agent gone)", moved, len(d.Moved), d.Erased))
	})
}

// SetMember adds a member with a role, changes its role, or (role "") removes it.
func (s *Service) SetMember(ctx context.Context, c Call, team, principal string, role graph.Role) (err error) {
	ctx, end := s.span(ctx, "SetMember", c)
	defer func() { end(err) }()
	if err := graph.CheckID("team", team); err != nil {
		return err
	}
	if err := graph.CheckID("principal", principal); err != nil {
		return err
	}
	switch role {
	case "", graph.RoleReader, graph.RoleWriter:
	default:
		return graph.Errorf(graph.EINVALID, "role must be reader or writer")
	}
	if err := s.admin(ctx, c, team); err != nil {
		return err
	}
	reason := principal + " removed"
	if role != "" {
		reason = principal + " is " + string(role)
	}
	return s.Dir.SetMember(ctx, c.P.Org, team, principal, role, s.event(c, graph.AuditMembershipChanged, team, c.P.Org.Team(team).GroupID(), reason))
}

// SetPromoter grants or revokes the promoter role (admin hosts).
func (s *Service) SetPromoter(ctx context.Context, c Call, principal string, promoter bool) (err error) {
	ctx, end := s.span(ctx, "SetPromoter", c)
	defer func() { end(err) }()
	if err := graph.CheckID("principal", principal); err != nil {
		return err
	}
	if err := s.admin(ctx, c, principal); err != nil {
		return err
	}
	reason := "revoked"
	if promoter {
		reason = "granted"
	}
	return s.Dir.SetPromoter(ctx, c.P.Org, principal, promoter, s.event(c, graph.AuditPromoterChanged, principal, c.P.Org.Global().GroupID(), reason))
}

// ListAudit lists the audit events of the requester's organization (admin hosts).
func (s *Service) ListAudit(ctx context.Context, c Call, f graph.AuditFilter) (_ []*graph.AuditEvent, _ string, err error) {
	ctx, end := s.span(ctx, "ListAudit", c)
	defer func() { end(err) }()
	if err := s.admin(ctx, c, "audit"); err != nil {
		return nil, "", err
	}
	limit, err := s.pageSize(f.Page.Limit)
	if err != nil {
		return nil, "", err
	}
	f.Page.Limit, f.Org = limit, c.P.Org
	return s.Audit.ListAudit(ctx, f)
}
