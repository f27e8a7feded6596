package graph

import (
	"context"
	"time"
)

// Role is a principal's role in a team.
type Role string

const (
	RoleReader Role = "reader" // reads the team space
	RoleWriter Role = "writer" // reads and writes it
)

// Agent is the first-class memory holder, with exactly one owner.
type Agent struct {
	ID        string
	OwnerID   string
	CreatedAt time.Time
	Shares    []Share // the owner's grants of read access to the private space, lapsed ones too
	// Delegates are the owner's grants of the right to write the agent's memories,
	// lapsed ones too.
	Delegates []Delegation
	Types     *SpaceTypes // the types its owner chose for its spaces; nil: the deployment's
}

// Share is one grant of read access to an agent's private space.
type Share struct {
	Principal string
	GrantedAt time.Time
	ExpiresAt *time.Time // nil: until revoked
	Expired   bool       // ExpiresAt has passed: the grant no longer gives access
}

// Delegation is one grant of the right to write an agent's memories in its own
// spaces (its private and public ones) in the owner's stead. It gives no read access:
// a delegate reads the private space only if it also holds a Share.
type Delegation struct {
	Principal string
	Role      Role // RoleWriter, the only role there is
	GrantedAt time.Time
	ExpiresAt *time.Time // nil: until revoked
	Expired   bool       // ExpiresAt has passed: the grant no longer gives anything
}

// SharedWith returns the requesters whose grants are in force.
func (a *Agent) SharedWith() []string {
	out := []string{}
	for _, s := range a.Shares {
		if !s.Expired {
			out = append(out, s.Principal)
		}
	}
	return out
}

// Team is a named group of principals sharing a team space.
type Team struct {
	Name      string
	CreatedAt time.Time
	OwnerID   string // the requester who created it; may dissolve it
	Members   map[string]Role
	Types     *SpaceTypes // the types a writer chose for its space; nil: the deployment's
}

// A requester's relation to an agent, as a list of agents shows it.
const (
	RelationOwner  = "owner"  // it owns the agent
	RelationShared = "shared" // it holds a grant in force of the agent's private space
	RelationNone   = "none"   // neither (an admin host listing every agent or another owner's)
)

// AgentQuery selects the agents to list: Requester's own (owned, or shared with it by a
// grant in force) unless All or Owner is set; with Owner only that owner's agents, with
// All (and no Owner) every agent. Who may ask for All or Owner is the service's
// decision (admin hosts).
type AgentQuery struct {
	Org       Org
	Requester string // whose relation each agent is listed with
	Owner     string
	All       bool
	Page      PageRequest
}

// ListedAgent is an agent of a list, with its shares (lapsed ones too) and the
// requester's relation to it.
type ListedAgent struct {
	Agent    *Agent
	Relation string
}

// AgentPage is one page of agents, newest first.
type AgentPage struct {
	Agents     []ListedAgent
	NextCursor string
	HasMore    bool
}

// TeamQuery selects the teams to list: those Requester is a member or the owner of,
// or with All every team (the service decides who may).
type TeamQuery struct {
	Org       Org
	Requester string
	All       bool
	Page      PageRequest
}

// ListedTeam is a team of a list (without its members) and the requester's role in it
// ("" when it is no member).
type ListedTeam struct {
	Team *Team
	Role Role
}

// TeamPage is one page of teams, newest first.
type TeamPage struct {
	Teams      []ListedTeam
	NextCursor string
	HasMore    bool
}

// Dissolution is what dissolving a team moves, or would: per agent, how many of the
// team space's memories go back to its private space, and how many are erased: those
// whose current content is not their agent's own (promoted copies, memories another
// requester changed), whose agent no longer exists or was erased, or whose agent was
// created after them.
type Dissolution struct {
	Moved  map[string]int
	Erased int
}

// Erasure is what erasing a requester erases, or would: its agents with their
// spaces, and its shared space (memories, their versions, entities, facts, conflicts);
// the grants it held and those of its agents, its memberships and its promoter role;
// and what keeps a record of it, its id replaced by a pseudonym: the teams it owned
// (they stay, owned by the pseudonym), the memories, versions and conflicts of other
// spaces it wrote, changed, promoted or resolved, and the audit events naming it.
type Erasure struct {
	Agents        int
	Memories      int
	Versions      int
	Entities      int
	Facts         int
	Conflicts     int
	Shares        int
	Delegations   int // those it held and those of its agents
	Memberships   int
	Promoter      bool
	Teams         int // teams it owned, now owned by the pseudonym
	Pseudonymized int // memories, versions and conflicts of other spaces recording it
	AuditEvents   int // audit events of its organization naming it
	// Principal: the store held the requester's principal (which grants, memberships
	// and the promoter role hang on, and which stays when they are gone).
	Principal bool
}

// Empty reports whether there is nothing of the requester to erase.
func (e Erasure) Empty() bool { return e == Erasure{} }

// PrincipalFacts is what the store knows about a requester: everything the Authorizer
// needs, read in one query at the start of a request.
type PrincipalFacts struct {
	Teams      map[string]Role
	Promoter   bool
	Owns       []string // agents the requester owns
	SharedWith []string // agents whose owners granted the requester their private space
	// ExpiredShares are agents whose grant to the requester has lapsed: no access, but a
	// use of one is audited.
	ExpiredShares []string
	// Asserted are those of the teams asked about (the ones a host asserts for the
	// request) that exist.
	Asserted []string
	// Delegated are agents whose owners granted the requester the right to write their
	// memories (delegations in force, not lapsed).
	Delegated []string
}

// Directory stores agents, teams and grants. Each change is written in one
// transaction together with its audit event. Every call is about one organization:
// ids name agents, teams and requesters within it, and nothing of another is read or
// changed.
type Directory interface {
	// ResolvePrincipal returns the facts about id in org, and which of the teams
	// asserted exist there, in one round trip; an unknown id has none.
	ResolvePrincipal(ctx context.Context, org Org, id string, asserted ...string) (PrincipalFacts, error)

	// SetSpaceTypes sets the entity and edge types of an agent's spaces (space is
	// either of them) or of a team's space (SpaceTypes), on the agent or team guard
	// names; ENOTFOUND if the agent or team does not exist, ECONFLICT if it is not
	// the one guard names any more (erased or dissolved and made again, or an agent
	// given to another owner, since the decision read it). ev is recorded in the same
	// transaction when the types are set.
	SetSpaceTypes(ctx context.Context, space Space, guard TypesGuard, t SpaceTypes, ev *AuditEvent) error

	// CreateAgent returns ECONFLICT if the id exists.
	CreateAgent(ctx context.Context, org Org, a *Agent, ev *AuditEvent) error
	// GetAgent returns ENOTFOUND if the agent does not exist.
	GetAgent(ctx context.Context, org Org, id string) (*Agent, error)
	// ListAgents lists the agents q selects, newest first (then by id), each with its
	// shares and q.Requester's relation to it. EINVALID for a cursor it did not issue.
	ListAgents(ctx context.Context, q AgentQuery) (AgentPage, error)
	// SetOwner gives the agent to owner if its owner is still expectedOwner (the one
	// the decision was made on), dropping its shares and delegations (the previous
	// owner's grants); ECONFLICT otherwise.
	SetOwner(ctx context.Context, org Org, id, expectedOwner, owner string, ev *AuditEvent) error
	// DeleteAgent erases the agent and every node and edge of its spaces, versions
	// included, if its owner is still expectedOwner, and returns the number of
	// episodes removed; ECONFLICT otherwise. What the agent wrote in other spaces
	// (teams, global, its owner's shared space) stays there, no longer its agent's
	// own (ContentAgent ""): it never goes back to an agent, one created later with
	// the same id included. Its shares and delegations go with it.
	DeleteAgent(ctx context.Context, org Org, id, expectedOwner string, ev *AuditEvent) (int, error)
	// SetShare grants (or revokes) principal read access to the agent's private space,
	// until expiresAt when it is not nil.
	SetShare(ctx context.Context, org Org, agent, principal string, granted bool, expiresAt *time.Time, ev *AuditEvent) error
	// SetDelegate grants principal the role (RoleWriter) on the agent's memories until
	// expiresAt when it is not nil, or with role "" revokes it, if the agent's owner is
	// still expectedOwner (the one the decision was made on); ENOTFOUND if the agent
	// does not exist, ECONFLICT if its owner changed.
	SetDelegate(ctx context.Context, org Org, agent, expectedOwner, principal string, role Role, expiresAt *time.Time, ev *AuditEvent) error
	// LapseShares audits up to limit grants whose expires_at has passed, each once
	// however many processes sweep, with the event audit returns; returns how many.
	LapseShares(ctx context.Context, limit int, audit func(org Org, agent, principal string, expiresAt time.Time) *AuditEvent) (int, error)
	// AuditExpiredShareUse records ev, a read by principal about agent after
	// principal's grant of its private space lapsed, if it is the first such read of
	// that lapse, once however many processes serve reads; reports whether it did. A
	// grant renewed and lapsed again is a new lapse.
	AuditExpiredShareUse(ctx context.Context, org Org, agent, principal string, ev *AuditEvent) (bool, error)

	// CreateTeam returns ECONFLICT if the team exists.
	CreateTeam(ctx context.Context, org Org, name, owner string, ev *AuditEvent) error
	// TeamMemories counts what dissolving team would move (DissolveTeam's answer,
	// without the change).
	TeamMemories(ctx context.Context, org Org, team string) (Dissolution, error)
	// DissolveTeam deletes team and its memberships and empties its space, in one
	// transaction with the event audit returns: each memory whose current content its
	// agent's owner wrote goes back to that agent's private space, queued for
	// extraction there with the versions that agent wrote; the others are erased (see
	// Dissolution); the space's entities and facts are deleted. The team's lock and
	// its memories' are held throughout, so a write or a move to its space either
	// lands before and is dissolved with it, or finds the team gone. ENOTFOUND if the
	// team does not exist.
	DissolveTeam(ctx context.Context, org Org, team string, audit func(Dissolution) *AuditEvent) (Dissolution, error)
	// GetTeam returns ENOTFOUND if the team does not exist.
	GetTeam(ctx context.Context, org Org, name string) (*Team, error)
	// ListTeams lists the teams q selects, newest first (then by name), each with
	// q.Requester's role in it. EINVALID for a cursor it did not issue.
	ListTeams(ctx context.Context, q TeamQuery) (TeamPage, error)
	// SetMember sets principal's role in team; an empty role removes the membership.
	// ENOTFOUND if the team does not exist.
	SetMember(ctx context.Context, org Org, team, principal string, role Role, ev *AuditEvent) error
	// EraseRequester erases requester id of org (see Erasure) in one transaction
	// with the event audit returns, replacing its id with pseudonym wherever a record
	// of it stays, so that nothing of the organization names it any more; with dryRun
	// it counts the same without changing anything (and audits nothing). The
	// requester's agents are erased as DeleteAgent erases one, and its shared space
	// under the same locks: a write to any of them, or an extraction under way there,
	// either lands before and is erased with it, or finds its space gone. A requester
	// created again with the id starts empty. ENOTFOUND when there is nothing of id
	// (Erasure.Empty).
	EraseRequester(ctx context.Context, org Org, id, pseudonym string, dryRun bool, audit func(Erasure) *AuditEvent) (Erasure, error)
	// SetPromoter grants or revokes the promoter role.
	SetPromoter(ctx context.Context, org Org, principal string, promoter bool, ev *AuditEvent) error
}
