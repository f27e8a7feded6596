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

// CheckID returns EINVALID naming field unless s is a valid id.
func CheckID(field, s string) error {
	if s == "" {
		return Errorf(EINVALID, "%s is required", field)
	}
	if !ValidID(s) {
		return Errorf(EINVALID, "%s must match ^[a-z0-9][a-z0-9_-]{0,62}$", field)
	}
	return nil
}

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
	Kind  SpaceKind
	Agent string // private and public spaces
	Team  string // team spaces
	Owner string // shared spaces: the requester that owns the agents sharing it
}

// GroupID is the space's group_id.
func (s Space) GroupID() string {
	switch s.Kind {
	case SpacePrivate, SpacePublic:
		return "agent-" + s.Agent + "-" + string(s.Kind)
	case SpaceTeam:
		return "team-" + s.Team
	case SpaceShared:
		return "user-" + s.Owner + "-shared"
	case SpaceGlobal:
		return "global"
	case SpaceSystem:
		return "system"
	}
	return ""
}

// Name is how the API shows a space: private, public, team:<name>, shared, global.
func (s Space) Name() string {
	if s.Kind == SpaceTeam {
		return "team:" + s.Team
	}
	return string(s.Kind)
}

// PrivateSpace, PublicSpace and TeamSpace build spaces.
func PrivateSpace(agent string) Space { return Space{Kind: SpacePrivate, Agent: agent} }
func PublicSpace(agent string) Space  { return Space{Kind: SpacePublic, Agent: agent} }
func TeamSpace(team string) Space     { return Space{Kind: SpaceTeam, Team: team} }

// SharedSpace is the space owner's agents share.
func SharedSpace(owner string) Space { return Space{Kind: SpaceShared, Owner: owner} }

var GlobalSpace = Space{Kind: SpaceGlobal}

// ParseGroupID returns the space of a group_id, or false when it is not one memgate
// makes.
func ParseGroupID(groupID string) (Space, bool) {
	switch {
	case groupID == "global":
		return GlobalSpace, true
	case groupID == "system":
		return Space{Kind: SpaceSystem}, true
	case strings.HasPrefix(groupID, "team-"):
		team := strings.TrimPrefix(groupID, "team-")
		return TeamSpace(team), ValidID(team)
	case strings.HasPrefix(groupID, "user-"):
		owner, ok := strings.CutSuffix(strings.TrimPrefix(groupID, "user-"), "-shared")
		return SharedSpace(owner), ok && ValidID(owner)
	case strings.HasPrefix(groupID, "agent-"):
		rest := strings.TrimPrefix(groupID, "agent-")
		for _, kind := range []SpaceKind{SpacePrivate, SpacePublic} {
			if agent, ok := strings.CutSuffix(rest, "-"+string(kind)); ok && ValidID(agent) {
				return Space{Kind: kind, Agent: agent}, true
			}
		}
	}
	return Space{}, false
}

// ParseSpaceName parses the API's name of a space relative to an agent and the
// requester asking: private, public, team:<name>, shared (the requester's) or global.
func ParseSpaceName(agent, requester, name string) (Space, error) {
	switch {
	case name == "private":
		return PrivateSpace(agent), nil
	case name == "public":
		return PublicSpace(agent), nil
	case name == "shared":
		return SharedSpace(requester), nil
	case name == "global":
		return GlobalSpace, nil
	case strings.HasPrefix(name, "team:"):
		team := strings.TrimPrefix(name, "team:")
		if err := CheckID("team", team); err != nil {
			return Space{}, err
		}
		return TeamSpace(team), nil
	}
	return Space{}, Errorf(EINVALID, "space must be private, public, team:<name>, shared or global")
}
