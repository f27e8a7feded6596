package service_test

import (
	"context"
	"testing"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/access/accesstest"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// readThen is a Directory that runs a step once, right after the next GetAgent or
// GetTeam: what another request does between a decision and its change.
type readThen struct {
	graph.Directory
	step func()
}

func (d *readThen) after() {
	if step := d.step; step != nil {
		d.step = nil
		step()
	}
}

func (d *readThen) GetAgent(ctx context.Context, org graph.Org, id string) (*graph.Agent, error) {
	a, err := d.Directory.GetAgent(ctx, org, id)
	d.after()
	return a, err
}

func (d *readThen) GetTeam(ctx context.Context, org graph.Org, name string) (*graph.Team, error) {
	t, err := d.Directory.GetTeam(ctx, org, name)
	d.after()
	return t, err
}

// TestSetTypes_OnTheHolderItRead: PUT .../types is decided on the agent or team as
// it was read. When, before the change lands, the agent is erased and made again by
// another owner, given to another owner, or the team is dissolved and made again for
// others, the types of the new one are not set (409: retry, and be decided again);
// when it is only gone, 404. The new agent or team keeps the deployment's types.
func TestSetTypes_OnTheHolderItRead(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	db := neo4jtest.DB(t)
	dir := &readThen{Directory: db}
	svc, mark, call := raceWorld(t, "types", dir, accesstest.TypesOntology)
	ctx := context.Background()
	trusted := access.Host{Name: "agent-host", Trusted: true, Requesters: []string{"*"}}
	admin := access.Host{Name: "ops", Trusted: true, Admin: true, Requesters: []string{"*"}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	alice, mallory, root := call("alice", trusted), call("mallory", trusted), call("root", admin)
	narrow := graph.SpaceTypes{EntityTypes: []string{"Person"}, EdgeTypes: []string{}}
	untouched := func(label, name string) {
		t.Helper()
		if got, found := neo4jtest.SpaceTypes(t, label, name); found && (got.EntityTypes != nil || got.EdgeTypes != nil) {
			t.Errorf("the new %s %s has the types %v set for the one before it", label, name, got)
		}
	}

	agent := "ag-" + mark
	_, err := svc.CreateAgent(ctx, alice, agent, "")
	must(err)
	dir.step = func() { // erased, and made again by mallory
		_, err := svc.DeleteAgent(ctx, alice, agent)
		must(err)
		_, err = svc.CreateAgent(ctx, mallory, agent, "")
		must(err)
	}
	if err := svc.SetAgentTypes(ctx, alice, agent, narrow); graph.ErrorCode(err) != graph.ECONFLICT {
		t.Errorf("set on an agent erased and made again by another owner: %v, want ECONFLICT", err)
	}
	untouched("Agent", agent)

	given := "given-" + mark
	_, err = svc.CreateAgent(ctx, alice, given, "")
	must(err)
	dir.step = func() { must(svc.TransferOwner(ctx, alice, given, mallory.P.ID)) }
	if err := svc.SetAgentTypes(ctx, alice, given, narrow); graph.ErrorCode(err) != graph.ECONFLICT {
		t.Errorf("set on an agent given to another owner meanwhile: %v, want ECONFLICT", err)
	}
	untouched("Agent", given)

	gone := "gone-" + mark
	_, err = svc.CreateAgent(ctx, alice, gone, "")
	must(err)
	dir.step = func() {
		_, err := svc.DeleteAgent(ctx, alice, gone)
		must(err)
	}
	if err := svc.SetAgentTypes(ctx, alice, gone, narrow); graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Errorf("set on an agent erased meanwhile: %v, want ENOTFOUND", err)
	}
	if _, found := neo4jtest.SpaceTypes(t, "Agent", gone); found {
		t.Error("setting types made the erased agent again")
	}

	team := "team-" + mark
	must(svc.CreateTeam(ctx, root, team, ""))
	must(svc.SetMember(ctx, root, team, alice.P.ID, graph.RoleWriter))
	dir.step = func() { // dissolved, and made again for mallory alone
		_, err := svc.DissolveTeam(ctx, root, team, false)
		must(err)
		must(svc.CreateTeam(ctx, root, team, ""))
		must(svc.SetMember(ctx, root, team, mallory.P.ID, graph.RoleWriter))
	}
	if err := svc.SetTeamTypes(ctx, call("alice", trusted), team, narrow); graph.ErrorCode(err) != graph.ECONFLICT {
		t.Errorf("set on a team dissolved and made again for others: %v, want ECONFLICT", err)
	}
	untouched("Team", team)

	// Undisturbed, both are set.
	must(svc.SetAgentTypes(ctx, mallory, agent, narrow))
	must(svc.SetTeamTypes(ctx, call("mallory", trusted), team, narrow))
	for label, name := range map[string]string{"Agent": agent, "Team": team} {
		if got, _ := neo4jtest.SpaceTypes(t, label, name); len(got.EntityTypes) != 1 || got.EdgeTypes == nil {
			t.Errorf("%s %s stores %v after an undisturbed set", label, name, got)
		}
	}
}
