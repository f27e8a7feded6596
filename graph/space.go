package graph

import (
	"regexp"
	"strings"
)

// idPattern is the rule for agent ids, team names and requester ids. group_ids built
// from them match Graphiti's ^[a-zA-Z0-9_-]+$ and cannot collide across space kinds.
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ValidID reports whether s is a valid agent id, team name or requester id.
func ValidID(s string) bool { return idPattern.MatchString(s) }

// PseudonymPrefix starts the pseudonym that replaces an erased requester's id (and its
// agents' ids): ids of that form are reserved, none is accepted as a requester, an
// agent, a team or the target of a grant (CheckID).
const PseudonymPrefix = "erased-"

// IsPseudonym reports whether id is of the reserved form of an erased requester's
// pseudonym.
func IsPseudonym(id string) bool { return strings.HasPrefix(id, PseudonymPrefix) }

// CheckID returns EINVALID naming field unless s is a valid id, and not one of the
// reserved form of pseudonyms.
func CheckID(field, s string) error {
	if s == "" {
		return Errorf(EINVALID, "%s is required", field)
	}
	if !ValidID(s) {
		return Errorf(EINVALID, "%s must match ^[a-z0-9][a-z0-9_-]{0,62}$", field)
	}
	if IsPseudonym(s) {
		return Errorf(EINVALID, "%s: ids starting with %s are reserved for the pseudonyms of erased requesters", field, PseudonymPrefix)
	}
	return nil
}

// orgPattern is the rule for organization names: an id without underscores, which
// separate an organization's prefix from the rest of a group_id.
var orgPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,30}$`)

// Org is an organization: the namespace of requesters, agents, teams and spaces.
// Nothing crosses from one to another. The zero Org is the one implicit organization
// of a deployment that configures none; its group_ids carry no prefix.
type Org string

// DefaultOrg is the implicit organization.
const DefaultOrg Org = ""

// CheckOrg returns EINVALID naming field unless s is a valid organization name.
func CheckOrg(field, s string) error {
	if !orgPattern.MatchString(s) {
		return Errorf(EINVALID, "%s must match ^[a-z0-9][a-z0-9-]{0,30}$", field)
	}
	return nil
}

// Prefix is what the organization's group_ids start with: "org-<name>_", or nothing
// for the implicit organization. A bare group_id never starts with "org-", and an
// organization's name holds no "_", so a group_id names one organization only.
func (o Org) Prefix() string {
	if o == DefaultOrg {
		return ""
	}
	return "org-" + string(o) + "_"
}

// Private, Public, Team, Shared, Global and System are the organization's spaces.
func (o Org) Private(agent string) Space { return Space{Org: o, Kind: SpacePrivate, Agent: agent} }
func (o Org) Public(agent string) Space  { return Space{Org: o, Kind: SpacePublic, Agent: agent} }
func (o Org) Team(team string) Space     { return Space{Org: o, Kind: SpaceTeam, Team: team} }
func (o Org) Shared(owner string) Space  { return Space{Org: o, Kind: SpaceShared, Owner: owner} }
func (o Org) Global() Space              { return Space{Org: o, Kind: SpaceGlobal} }
func (o Org) System() Space              { return Space{Org: o, Kind: SpaceSystem} }

// SpaceKind is the kind of a memory space.
type SpaceKind string

const (
	SpacePrivate SpaceKind = "private" // agent-{agent}-private: the agent's owner
	SpacePublic  SpaceKind = "public"  // agent-{agent}-public: read by all, written by the owner
	SpaceTeam    SpaceKind = "team"    // team-{team}: members read, writers write
	SpaceGlobal  SpaceKind = "global"  // global: read by all, written only by promotion
	SpaceShared  SpaceKind = "shared"  // user-{owner}-shared: one owner's, across all its agents
	SpaceSystem  SpaceKind = "system"  // system: the service's own audit events
)

// Space is where a memory lives; one space is one group_id.
type Space struct {
	Org   Org
	Kind  SpaceKind
	Agent string // private and public spaces
	Team  string // team spaces
	Owner string // shared spaces: the requester that owns the agents sharing it
}

// GroupID is the space's group_id: its organization's prefix, then the space.
func (s Space) GroupID() string {
	var bare string
	switch s.Kind {
	case SpacePrivate, SpacePublic:
		bare = "agent-" + s.Agent + "-" + string(s.Kind)
	case SpaceTeam:
		bare = "team-" + s.Team
	case SpaceShared:
		bare = "user-" + s.Owner + "-shared"
	case SpaceGlobal:
		bare = "global"
	case SpaceSystem:
		bare = "system"
	default:
		return ""
	}
	return s.Org.Prefix() + bare
}

// Name is how the API shows a space: private, public, team:<name>, shared, global.
func (s Space) Name() string {
	if s.Kind == SpaceTeam {
		return "team:" + s.Team
	}
	return string(s.Kind)
}

// ParseGroupID returns the space of a group_id, or false when it is not one memgate
// makes.
func ParseGroupID(groupID string) (Space, bool) {
	org := DefaultOrg
	if rest, ok := strings.CutPrefix(groupID, "org-"); ok {
		name, bare, ok := strings.Cut(rest, "_")
		if !ok || !orgPattern.MatchString(name) {
			return Space{}, false
		}
		org, groupID = Org(name), bare
	}
	switch {
	case groupID == "global":
		return org.Global(), true
	case groupID == "system":
		return org.System(), true
	case strings.HasPrefix(groupID, "team-"):
		team := strings.TrimPrefix(groupID, "team-")
		return org.Team(team), ValidID(team)
	case strings.HasPrefix(groupID, "user-"):
		owner, ok := strings.CutSuffix(strings.TrimPrefix(groupID, "user-"), "-shared")
		return org.Shared(owner), ok && ValidID(owner)
	case strings.HasPrefix(groupID, "agent-"):
		rest := strings.TrimPrefix(groupID, "agent-")
		for _, kind := range []SpaceKind{SpacePrivate, SpacePublic} {
			if agent, ok := strings.CutSuffix(rest, "-"+string(kind)); ok && ValidID(agent) {
				return Space{Org: org, Kind: kind, Agent: agent}, true
			}
		}
	}
	return Space{}, false
}

// ParseSpaceName parses the API's name of a space of the organization relative to an
// agent and the requester asking: private, public, team:<name>, shared (the requester's) or global.
func (o Org) ParseSpaceName(agent, requester, name string) (Space, error) {
	switch {
	case name == "private":
		return o.Private(agent), nil
	case name == "public":
		return o.Public(agent), nil
	case name == "shared":
		return o.Shared(requester), nil
	case name == "global":
		return o.Global(), nil
	case strings.HasPrefix(name, "team:"):
		team := strings.TrimPrefix(name, "team:")
		if err := CheckID("team", team); err != nil {
			return Space{}, err
		}
		return o.Team(team), nil
	}
	return Space{}, Errorf(EINVALID, "space must be private, public, team:<name>, shared or global")
}
