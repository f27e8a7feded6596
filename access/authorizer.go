package access

import (
	"regexp"

	"github.com/memgate/memgate/graph"
)

// Effect is the outcome of a decision.
type Effect int

const (
	Deny    Effect = iota // the zero value: anything not decided is denied
	Allow                 // as asked
	Confine               // allowed, but in Decision.Space instead of the space asked for
)

// Decision answers one write, delete or promotion question.
type Decision struct {
	Effect Effect
	Space  graph.Space // where the write lands (Allow and Confine)
	Reason string      // why it was denied or confined; safe to show and to audit
}

func allow(s graph.Space) Decision             { return Decision{Effect: Allow, Space: s} }
func deny(reason string) Decision              { return Decision{Effect: Deny, Reason: reason} }
func confine(s graph.Space, r string) Decision { return Decision{Effect: Confine, Space: s, Reason: r} }

// Authorizer answers every access question, so reads, writes, deletes, promotions and
// erasure can never disagree. A host may supply its own; Policy is the default.
type Authorizer interface {
	// Visible is every space p may read. Reads by id run with it.
	Visible(p Principal) graph.Visible
	// VisibleForAgent is the part of Visible that a list or search about agent sees:
	// the agent's public space, its private one for the owner and share grantees, the
	// owner's shared space for the owner, and the scopes asked for (teams, global)
	// where they are visible.
	VisibleForAgent(p Principal, agent string, scopes []graph.Space) graph.Visible
	// Write decides a new memory of agent's in space: its owner's, or a delegate's in
	// the agent's own private and public spaces only.
	Write(p Principal, agent string, space graph.Space) Decision
	// Modify decides changing a memory in space that p can already see: deleting it,
	// retrying its ingestion. An agent's delegates modify its memories as its owner
	// does, those they can see.
	Modify(p Principal, space graph.Space) Decision
	// Promote decides copying a memory p can see from source into target: p must be
	// able to republish what is in source (its agent's owner for a private space, a
	// writer of its team; anyone for what all may read; never a delegate or a read
	// share) and to write to target by promotion.
	Promote(p Principal, source, target graph.Space) Decision
	// ManageAgent decides changing or erasing agent (owner or admin host).
	ManageAgent(p Principal, agent *graph.Agent) Decision
	// Usage decides reading what extracting agent's memories cost: who may manage it
	// (its owner, an admin host). Denied, the agent is not found for p, as one that
	// does not exist: its usage is no one else's to know exists.
	Usage(p Principal, agent *graph.Agent) Decision
	// Share decides granting or revoking read access to agent's private space.
	Share(p Principal, agent *graph.Agent) Decision
	// Delegate decides granting or revoking another requester the right to write
	// agent's memories: its owner only (not an admin host; a delegate never delegates
	// further).
	Delegate(p Principal, agent *graph.Agent) Decision
	// Distil decides a compaction or reflection of agent, which reads what p sees of
	// it and writes into its private space: its owner only, where private memories
	// are allowed (a delegate, which may write there, may not).
	Distil(p Principal, agent string) Decision
	// Admin decides the admin routes: teams, memberships, promoters, audit.
	Admin(p Principal) Decision
	// DissolveTeam decides deleting team and sending its memories back to their
	// agents' private spaces (the team's owner or an admin host).
	DissolveTeam(p Principal, team *graph.Team) Decision
	// EraseRequester decides erasing requester id of p's organization with all of
	// its agents, its shared space and its grants, memberships and roles: an admin
	// host, or the requester itself through its own end user's JWT (a host key naming
	// it is not the person asking).
	EraseRequester(p Principal, id string) Decision
	// Follow decides registering a webhook that follows space: an agent's private or
	// public space (whose events reach the subscriber only while Visible holds them,
	// decided when each is sent), a team's space for a stored member (a membership
	// its host asserts holds for one request, not for the deliveries after it), the
	// organization's system space (its audit events) for an admin host.
	Follow(p Principal, space graph.Space) Decision
	// CraftedTargets returns the group_ids that query names with agent:<id> or
	// team:<name> tokens and that lie outside what p may read.
	CraftedTargets(p Principal, query string) []string
}

// foreignSpace is the reason for any decision about a space of another organization.
// The service never asks one (it builds every space in the requester's organization,
// and reads by id see only its group_ids, so the answer is 404); the policy refuses it
// all the same.
const foreignSpace = "not a space of the requester's organization"

// Policy is the default Authorizer: the access model of docs/concepts.md.
type Policy struct {
	// AllowPrivate false gives the all-public model: private writes are refused.
	AllowPrivate bool
}

var _ Authorizer = Policy{}

func (pol Policy) Visible(p Principal) graph.Visible {
	var ids []string
	for _, a := range sortedKeys(p.Owns) {
		ids = append(ids, p.Org.Private(a).GroupID(), p.Org.Public(a).GroupID())
	}
	for _, a := range sortedKeys(p.SharedWith) {
		if !p.Owns[a] {
			ids = append(ids, p.Org.Private(a).GroupID())
		}
	}
	for _, t := range sortedKeys(p.Teams) {
		ids = append(ids, p.Org.Team(t).GroupID())
	}
	ids = append(ids, p.Org.Shared(p.ID).GroupID(), p.Org.Global().GroupID())
	return graph.Visible{GroupIDs: ids, AnyAgentPublic: true, Org: p.Org}
}

func (pol Policy) VisibleForAgent(p Principal, agent string, scopes []graph.Space) graph.Visible {
	ids := []string{p.Org.Public(agent).GroupID()}
	if p.canReadPrivate(agent) {
		ids = append(ids, p.Org.Private(agent).GroupID())
	}
	if p.Owns[agent] {
		ids = append(ids, p.Org.Shared(p.ID).GroupID())
	}
	for _, s := range scopes {
		switch {
		case s.Kind == graph.SpaceTeam && p.Teams[s.Team] != "":
			ids = append(ids, s.GroupID())
		case s.Kind == graph.SpaceGlobal:
			ids = append(ids, s.GroupID())
		}
	}
	return graph.Visible{GroupIDs: dedupe(ids), Org: p.Org}
}

func (pol Policy) Write(p Principal, agent string, s graph.Space) Decision {
	if s.Org != p.Org {
		return deny(foreignSpace)
	}
	if p.delegate(agent) {
		return pol.delegateWrite(agent, s)
	}
	if !p.Owns[agent] {
		return deny("only the agent's owner may write its memories")
	}
	private := p.Org.Private(agent)
	switch s.Kind {
	case graph.SpacePrivate, graph.SpacePublic:
		if s.Agent != agent {
			return deny("an agent writes only to its own spaces")
		}
		if s.Kind == graph.SpacePrivate && !pol.AllowPrivate {
			return deny("private memories are disabled in this deployment")
		}
		return allow(s)
	case graph.SpaceTeam:
		if p.Teams[s.Team] == graph.RoleWriter {
			return allow(s)
		}
		if !p.Host.Trusted && pol.AllowPrivate {
			return confine(private, "a confined host may not write to team spaces; stored in the agent's private space")
		}
		return deny("not a writer of team " + s.Team)
	case graph.SpaceShared:
		if s.Owner == p.ID {
			return allow(s)
		}
		return deny("a shared space is written only for its owner's agents")
	case graph.SpaceGlobal:
		return deny("the global space is written only by promotion")
	}
	return deny("this space cannot be written")
}

// delegateWrite decides a write of agent's by one of its delegates: into the agent's
// own private and public spaces, never a team's, a shared or the global space (a
// confined host is not redirected: there is no space of its own to redirect to).
func (pol Policy) delegateWrite(agent string, s graph.Space) Decision {
	if (s.Kind != graph.SpacePrivate && s.Kind != graph.SpacePublic) || s.Agent != agent {
		return deny("a delegate writes only to the agent's own private and public spaces")
	}
	if s.Kind == graph.SpacePrivate && !pol.AllowPrivate {
		return deny("private memories are disabled in this deployment")
	}
	return allow(s)
}

func (pol Policy) Modify(p Principal, s graph.Space) Decision {
	if s.Org != p.Org {
		return deny(foreignSpace)
	}
	switch s.Kind {
	case graph.SpacePrivate, graph.SpacePublic:
		if p.Owns[s.Agent] || p.Delegated[s.Agent] {
			return allow(s)
		}
		return deny("only the agent's owner or its delegates may change or delete its memories")
	case graph.SpaceTeam:
		if p.Teams[s.Team] == graph.RoleWriter {
			return allow(s)
		}
		return deny("not a writer of team " + s.Team)
	case graph.SpaceShared:
		if s.Owner == p.ID {
			return allow(s)
		}
		return deny("only the owner may change the memories of its shared space")
	case graph.SpaceGlobal:
		if p.Promoter {
			return allow(s)
		}
		return deny("changing the global space needs the promoter role")
	}
	return deny("this space cannot be changed")
}

func (pol Policy) Promote(p Principal, source, target graph.Space) Decision {
	if source.Org != p.Org || target.Org != p.Org {
		return deny(foreignSpace)
	}
	switch source.Kind {
	case graph.SpacePublic, graph.SpaceGlobal: // what every requester reads
	case graph.SpacePrivate: // a read share or a delegate never republishes
		if !p.Owns[source.Agent] {
			return deny("only the owner of a private or shared space or a writer of a team may promote from it")
		}
	case graph.SpaceTeam, graph.SpaceShared: // a team reader never republishes
		if d := pol.Modify(p, source); d.Effect != Allow {
			return deny("only the owner of a private or shared space or a writer of a team may promote from it")
		}
	default:
		return deny("memories are promoted only from an agent's, a team's or the global space")
	}
	switch target.Kind {
	case graph.SpaceGlobal:
		if p.Promoter {
			return allow(target)
		}
		return deny("promoting to the global space needs the promoter role")
	case graph.SpaceTeam:
		if p.Teams[target.Team] == graph.RoleWriter {
			return allow(target)
		}
		return deny("not a writer of team " + target.Team)
	}
	return deny("memories are promoted only to a team or the global space")
}

func (pol Policy) ManageAgent(p Principal, a *graph.Agent) Decision {
	if a.OwnerID == p.ID || p.Host.Admin {
		return allow(graph.Space{})
	}
	return deny("only the agent's owner or an admin host may change it")
}

func (pol Policy) Usage(p Principal, a *graph.Agent) Decision {
	if pol.ManageAgent(p, a).Effect == Allow {
		return allow(graph.Space{})
	}
	return deny("only the agent's owner or an admin host may read its usage")
}

func (pol Policy) Share(p Principal, a *graph.Agent) Decision {
	if a.OwnerID == p.ID {
		return allow(p.Org.Private(a.ID))
	}
	return deny("only the agent's owner may share its private space")
}

func (pol Policy) Delegate(p Principal, a *graph.Agent) Decision {
	if a.OwnerID == p.ID {
		return allow(graph.Space{})
	}
	return deny("only the agent's owner may delegate writing its memories")
}

func (pol Policy) Distil(p Principal, agent string) Decision {
	if !p.Owns[agent] {
		return deny("only the agent's owner compacts or reflects it")
	}
	return pol.Write(p, agent, p.Org.Private(agent))
}

func (pol Policy) DissolveTeam(p Principal, t *graph.Team) Decision {
	if t.OwnerID == p.ID || p.Host.Admin {
		return allow(p.Org.Team(t.Name))
	}
	return deny("only the team's owner or an admin host may dissolve it")
}

func (pol Policy) EraseRequester(p Principal, id string) Decision {
	if p.Host.Admin || (id != "" && p.ID == id && p.Host.Subject == id) {
		return allow(p.Org.Shared(id))
	}
	return deny("only an admin host, or the requester itself with its own token, may erase a requester")
}

func (pol Policy) Admin(p Principal) Decision {
	if p.Host.Admin {
		return allow(graph.Space{})
	}
	return deny("this route needs an admin host key")
}

func (pol Policy) Follow(p Principal, s graph.Space) Decision {
	if s.Org != p.Org {
		return deny(foreignSpace)
	}
	switch s.Kind {
	case graph.SpacePrivate, graph.SpacePublic:
		return allow(s)
	case graph.SpaceTeam:
		if p.Teams[s.Team] == "" {
			return deny("only a member of the team may follow its space")
		}
		if p.Asserted[s.Team] != "" {
			return deny("a webhook follows stored memberships only; a membership the host asserts holds for one request")
		}
		return allow(s)
	case graph.SpaceSystem:
		if d := pol.Admin(p); d.Effect != Allow {
			return deny("audit events need an admin host key")
		}
		return allow(s)
	}
	return deny("no webhook follows a " + string(s.Kind) + " space")
}

var spaceToken = regexp.MustCompile(`\b(agent|team):([a-z0-9][a-z0-9_-]{0,62})`)

func (pol Policy) CraftedTargets(p Principal, query string) []string {
	var out []string
	for _, m := range spaceToken.FindAllStringSubmatch(query, -1) {
		switch {
		case m[1] == "agent" && !p.canReadPrivate(m[2]):
			out = append(out, p.Org.Private(m[2]).GroupID())
		case m[1] == "team" && p.Teams[m[2]] == "":
			out = append(out, p.Org.Team(m[2]).GroupID())
		}
	}
	return dedupe(out)
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
