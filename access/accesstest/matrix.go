// Package accesstest loads the authorization matrix of access/testdata/matrix.json,
// which the policy tests, the service tests and the HTTP tests all run.
package accesstest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/memgate/memgate/graph"
)

// Matrix is the world, the principals and the expected outcome of every cell.
type Matrix struct {
	About  string   `json:"about"`
	Spaces []string `json:"spaces"` // the columns of the memory operations
	Agents []string `json:"agents"` // the columns of the agent operations
	Teams  []string `json:"teams"`  // the columns of the team operations
	// Copies are the columns of the copy operations: the spaces a promoted copy can be
	// in (teams, global), each holding copies of CopySource's seed.
	Copies []string `json:"copies"`
	World  World    `json:"world"`
	// PromoteToTeam is the team promote_team copies memories to.
	PromoteToTeam string `json:"promote_to_team"`
	// SeedWriters names, for the columns that are no agent's own (teams, global), the
	// agent whose owner writes their memories (global: by promotion).
	SeedWriters map[string]string `json:"seed_writers"`
	// CopySource is the space column whose seed the copy operations' copies are
	// promoted from, each by the SeedWriters agent's owner of the copy's column.
	CopySource string `json:"copy_source"`
	// DistilPlants are, per space column, a memory of one of the world's agents whose
	// words are not its owner's: what compact_words and reflect_words must never draw
	// on, whoever distils.
	DistilPlants map[string]Plant `json:"distil_plants"`
	// Principals are the rows.
	Principals map[string]Principal `json:"principals"`
	// Expect[principal][operation] lists one outcome per column: in Spaces order for
	// Operations, in Agents order for AgentOperations, in Teams order for
	// TeamOperations, in Copies order for CopyOperations.
	Expect map[string]map[string]string `json:"expect"`
}

type World struct {
	Agents    map[string]string            `json:"agents"` // agent -> owner
	Shares    map[string][]string          `json:"shares"` // agent -> grantees
	Teams     map[string]map[string]string `json:"teams"`  // team -> member -> role
	Promoters []string                     `json:"promoters"`
	// TeamOwners own their teams (may dissolve them); a team not named here is owned
	// by root, the admin requester that creates the world.
	TeamOwners map[string]string `json:"team_owners"`
	// LapsedShares are shares granted for a moment, lapsed before the cells run.
	LapsedShares map[string][]string `json:"lapsed_shares"`
	// Delegations are agent -> the requesters its owner lets write its memories.
	Delegations map[string][]string `json:"delegations"`
	// LapsedDelegations are delegations granted for a moment, lapsed before the cells
	// run.
	LapsedDelegations map[string][]string `json:"lapsed_delegations"`
}

// Plant is a memory of Agent in a column's space that its owner did not write: Writer
// (a world agent, whose owner writes it, through a host asserting Asserts when set)
// wrote it, or the agent's owner did and Rewriter's owner changed it since.
type Plant struct {
	Agent    string `json:"agent"`
	Writer   string `json:"writer"`
	Rewriter string `json:"rewriter,omitempty"`
	Asserts  string `json:"asserts,omitempty"`
}

type Principal struct {
	Requester string `json:"requester"`
	// Host is trusted, admin, confined, or asserting (a trusted key with
	// assert_teams): of the world's organization (the implicit one), or of another
	// one, where the world holds nothing, when prefixed with its name and "_"
	// (globex_trusted).
	Host  string `json:"host"`
	Agent string `json:"agent"`
	// Asserts is the X-Requester-Teams its host sends, in the world's team names.
	Asserts string `json:"asserts,omitempty"`
}

// Org is the organization of the principal's host ("" for the world's own).
func (p Principal) Org() string {
	org, _, other := strings.Cut(p.Host, "_")
	if !other {
		return ""
	}
	return org
}

// AdminHost is the admin host of the principal's organization: who lists its audit
// events.
func (p Principal) AdminHost() string {
	if org := p.Org(); org != "" {
		return org + "_admin"
	}
	return "admin"
}

// AssertedTeams is the principal's X-Requester-Teams with each team named through id
// (a test's suffix; a team made like a world's team, for the operations that make
// one), "" when it asserts none.
func (p Principal) AssertedTeams(id func(string) string) string {
	if p.Asserts == "" {
		return ""
	}
	items := strings.Split(p.Asserts, ",")
	for i, item := range items {
		team, role, withRole := strings.Cut(item, ":")
		items[i] = id(team)
		if withRole {
			items[i] += ":" + role
		}
	}
	return strings.Join(items, ",")
}

// Operations on memories, one cell per space, in the order the tests run them.
// compact_words and reflect_words run first, while the world's agents hold only the
// world's memories.
var Operations = []string{"compact_words", "reflect_words", "create", "create_fact", "get", "list", "search", "context", "list_entities",
	"delete", "retry", "promote", "promote_team", "update", "move", "move_distilled", "get_expired", "create_over_quota",
	"resolve_conflict", "versions_rule", "subscribe", "webhook_event"}

// AgentOperations on agents, one cell per agent column, run after Operations.
var AgentOperations = []string{"list_agents", "list_agents_all", "share", "unshare", "delegate", "undelegate", "transfer", "erase", "compact", "reflect",
	"usage", "set_types"}

// TeamOperations on teams, one cell per team column, run after AgentOperations.
var TeamOperations = []string{"list_teams", "list_teams_all", "dissolve", "copy_dissolve", "move_into_dissolved", "set_team_types"}

// CopyOperations on promoted copies, one cell per column of Copies, run after
// TeamOperations.
var CopyOperations = []string{"copy_update", "copy_delete", "copy_move"}

// Cell is one assertion: what Principal gets doing Operation on Column (a column of
// Spaces, Agents, Teams or Copies).
type Cell struct {
	Principal, Operation, Column, Want string
}

// String names the cell as every tier's failure message does.
func (c Cell) String() string {
	return "principal " + c.Principal + ", operation " + c.Operation + ", column " + c.Column
}

// Load reads the matrix from access/testdata.
func Load() (*Matrix, error) {
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "testdata", "matrix.json"))
	if err != nil {
		return nil, err
	}
	var m Matrix
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("matrix.json: %w", err)
	}
	return &m, nil
}

// Cells returns every assertion in the order of Operations, AgentOperations,
// TeamOperations, then CopyOperations. It fails on a principal without expectations,
// an operation it does not know, a missing operation, or a row of the wrong length.
func (m *Matrix) Cells() ([]Cell, error) {
	columns := map[string][]string{}
	for _, op := range Operations {
		columns[op] = m.Spaces
	}
	for _, op := range AgentOperations {
		columns[op] = m.Agents
	}
	for _, op := range TeamOperations {
		columns[op] = m.Teams
	}
	for _, op := range CopyOperations {
		columns[op] = m.Copies
	}
	for name, ops := range m.Expect {
		if _, ok := m.Principals[name]; !ok {
			return nil, fmt.Errorf("matrix: expectations for %s, who is not a principal", name)
		}
		for op := range ops {
			if columns[op] == nil {
				return nil, fmt.Errorf("matrix: %s has a row for the unknown operation %q", name, op)
			}
		}
	}
	names := make([]string, 0, len(m.Principals))
	for name := range m.Principals {
		names = append(names, name)
	}
	sort.Strings(names)
	var cells []Cell
	for _, op := range slices.Concat(Operations, AgentOperations, TeamOperations, CopyOperations) {
		for _, name := range names {
			row, ok := m.Expect[name][op]
			if !ok {
				return nil, fmt.Errorf("matrix: no %s row for %s", op, name)
			}
			fields := strings.Fields(row)
			if len(fields) != len(columns[op]) {
				return nil, fmt.Errorf("matrix: %s %s has %d cells, want %d", name, op, len(fields), len(columns[op]))
			}
			for i, want := range fields {
				cells = append(cells, Cell{Principal: name, Operation: op, Column: columns[op][i], Want: want})
			}
		}
	}
	return cells, nil
}

// SpaceColumn splits a column of Spaces into the kind of its space (private, public,
// shared, team, global, system) and the agent or team it names: a_private is agent
// a's private space, a_shared the shared space of agent a's owner, team_x is team x.
func SpaceColumn(column string) (kind, name string) {
	if team, ok := strings.CutPrefix(column, "team_"); ok {
		return "team", team
	}
	if agent, vis, ok := strings.Cut(column, "_"); ok {
		return vis, agent
	}
	return column, ""
}

// SeedAgent is the agent that writes the memories of a column of Spaces: the agent
// of an agent's space, the SeedWriters one of the others ("" for system).
func (m *Matrix) SeedAgent(column string) string {
	if agent, ok := m.SeedWriters[column]; ok {
		return agent
	}
	kind, name := SpaceColumn(column)
	switch kind {
	case "private", "public", "shared":
		return name
	}
	return ""
}

// TeamOwner is the requester that owns a team of the world.
func (w World) TeamOwner(team string) string {
	if owner, ok := w.TeamOwners[team]; ok {
		return owner
	}
	return "root"
}

// SpaceArgs returns what a client names to write to a column's space: the agent (for
// an agent's spaces), the visibility, and the team (for a team's), each id passed
// through id (a test's suffix).
func SpaceArgs(column string, id func(string) string) (agent, visibility, team string) {
	kind, name := SpaceColumn(column)
	switch kind {
	case "private", "public", "shared":
		return id(name), kind, ""
	case "team":
		return "", "team", id(name)
	}
	return "", kind, "" // global, system
}

// TypesOntology is the deployment's ontology of every tier's server, for set_types and
// set_team_types: the pipeline's entity types (extract.DefaultEntityTypes) and two
// edge types joining any.
var TypesOntology = graph.Ontology{
	EntityTypes: []graph.EntityType{{Name: "Person"}, {Name: "Organization"}, {Name: "Location"}, {Name: "Event"}, {Name: "Product"},
		{Name: "Concept"}},
	EdgeTypes: []graph.EdgeType{{Name: "WORKS_AT"}, {Name: "KNOWS"}},
}

// NextTypes is what a set_types or set_team_types cell names: all of TypesOntology's
// types, each list in the order after stored's (the declared order turned by one when
// nothing is stored), so that what an allowed cell stores differs from what was
// stored before it, and the space keeps every type (extraction in the world's spaces
// is unchanged).
func NextTypes(stored graph.SpaceTypes) graph.SpaceTypes {
	var entities, edges []string
	for _, t := range TypesOntology.EntityTypes {
		entities = append(entities, t.Name)
	}
	for _, t := range TypesOntology.EdgeTypes {
		edges = append(edges, t.Name)
	}
	next := func(names, stored []string) []string {
		if len(stored) == len(names) {
			names = stored
		}
		return append(slices.Clone(names[1:]), names[0])
	}
	return graph.SpaceTypes{EntityTypes: next(entities, stored.EntityTypes), EdgeTypes: next(edges, stored.EdgeTypes)}
}

// TypesOutcome is what a tier says of a set_types or set_team_types cell answered got
// (allow when it was), from the types the agent or team stored before the cell
// (before), those it sent (sent), and those it stores after (after; found false for
// no such agent or team): got, unless the types are not what got means.
func TypesOutcome(got string, before, sent, after graph.SpaceTypes, found bool) string {
	want := before
	if got == "allow" {
		want = sent
	}
	equal := slices.Equal(want.EntityTypes, after.EntityTypes) && slices.Equal(want.EdgeTypes, after.EdgeTypes)
	switch {
	case !found && got == "allow":
		return "allow, but there is no such agent or team"
	case !found:
		return got // ghost: none made
	case !equal && got == "allow":
		return fmt.Sprintf("allow, but the types stored are %v, not those sent", after)
	case !equal:
		return fmt.Sprintf("%s, but the types stored changed to %v", got, after)
	}
	return got
}
