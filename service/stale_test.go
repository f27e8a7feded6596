package service_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// TestWrite_JudgedAgainstTheHolderItSaw: a request is judged on its requester as read
// at its start. When the team or agent it writes to is dissolved or erased and created
// again with the same name by someone else before the write lands, the write (a new
// memory, a move, a promotion; also one for the re-created agent into a team that
// stayed) reaches nothing (404) rather than the new team's or the new owner's space.
func TestWrite_JudgedAgainstTheHolderItSaw(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	db := neo4jtest.DB(t)
	svc, mark, call := raceWorld(t, "stale", db, graph.Ontology{})
	ctx := context.Background()
	trusted := access.Host{Name: "agent-host", Trusted: true, Requesters: []string{"*"}}
	admin := access.Host{Name: "ops", Trusted: true, Admin: true, Requesters: []string{"*"}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	alice, root := call("alice", trusted), call("root", admin)
	agent, other, team, kept := "ag-"+mark, "ag2-"+mark, "team-"+mark, "kept-"+mark
	for _, a := range []string{agent, other} {
		_, err := svc.CreateAgent(ctx, alice, a, "")
		must(err)
	}
	for _, t := range []string{team, kept} {
		must(svc.CreateTeam(ctx, root, t, ""))
		must(svc.SetMember(ctx, root, t, alice.P.ID, graph.RoleWriter))
	}
	must(svc.SetPromoter(ctx, root, alice.P.ID, true))
	add := func(c service.Call, m service.NewMemory) (*graph.Episode, error) {
		added, errs := svc.Add(ctx, c, []service.NewMemory{m}, "")
		return added[0].Episode, errs[0]
	}
	toMove, err := add(call("alice", trusted), service.NewMemory{AgentID: other, Text: "to move into the team", Visibility: "private"})
	must(err)
	toPromote, err := add(call("alice", trusted), service.NewMemory{AgentID: other, Text: "to promote into the team", Visibility: "public"})
	must(err)

	// alice's requests are judged now: writer of the team, owner of the agent.
	stale := call("alice", trusted)
	// Meanwhile the team is dissolved and made again for bob alone, and the agent is
	// erased and made again by mallory.
	_, err = svc.DissolveTeam(ctx, root, team, false)
	must(err)
	must(svc.CreateTeam(ctx, root, team, ""))
	must(svc.SetMember(ctx, root, team, "bob-"+mark, graph.RoleWriter))
	_, err = svc.DeleteAgent(ctx, call("alice", trusted), agent)
	must(err)
	_, err = svc.CreateAgent(ctx, call("mallory", trusted), agent, "")
	must(err)

	for name, try := range map[string]func() error{
		"a new memory in the team": func() error {
			_, err := add(stale, service.NewMemory{AgentID: other, Text: "planted in the new team", Visibility: "team", Team: team})
			return err
		},
		"a new memory of the re-created agent in a team that stayed": func() error {
			_, err := add(stale, service.NewMemory{AgentID: agent, Text: "in mallory's agent's name", Visibility: "team", Team: kept})
			return err
		},
		"a new memory in the agent's private space": func() error {
			_, err := add(stale, service.NewMemory{AgentID: agent, Text: "planted in mallory's agent", Visibility: "private"})
			return err
		},
		"a move into the team": func() error {
			_, err := svc.Update(ctx, stale, toMove.UUID, service.Patch{Given: map[string]bool{"visibility": true, "team": true},
				Memory: service.NewMemory{Visibility: "team", Team: team}})
			return err
		},
		"a promotion into the team": func() error {
			_, err := svc.Promote(ctx, stale, toPromote.UUID, "team:"+team)
			return err
		},
	} {
		if err := try(); graph.ErrorCode(err) != graph.ENOTFOUND {
			t.Errorf("%s by the stale request: %v, want not found", name, err)
		}
	}
	for _, group := range []string{graph.DefaultOrg.Team(team).GroupID(), graph.DefaultOrg.Team(kept).GroupID(), graph.DefaultOrg.Private(agent).GroupID()} {
		if n := neo4jtest.Count(t, "MATCH (e:Episodic {group_id: $g}) RETURN count(e)", map[string]any{"g": group}); n != 0 {
			t.Errorf("%d memories in %s after the stale writes", n, group)
		}
	}
	// A request judged after the new team and agent were made is judged against them.
	if _, err := add(call("alice", trusted), service.NewMemory{AgentID: other, Text: "x", Visibility: "team", Team: team}); graph.ErrorCode(err) != graph.EFORBIDDEN {
		t.Errorf("a fresh request of the former writer: %v, want forbidden", err)
	}
	if _, err := add(call("mallory", trusted), service.NewMemory{AgentID: agent, Text: "mallory's own", Visibility: "private"}); err != nil {
		t.Errorf("the new owner writing its agent: %v", err)
	}
}

// raceWorld is a service on the test Neo4j, its Directory dir, for the tests that race
// a change against a decision: the mark its names carry (forgotten when the test
// ends), and call, the call of who (who-mark) through host h.
func raceWorld(t *testing.T, prefix string, dir graph.Directory, o graph.Ontology) (*service.Service, string, func(who string, h access.Host) service.Call) {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	mark := prefix + hex.EncodeToString(b[:])
	neo4jtest.Forget(t, mark)
	db := neo4jtest.DB(t)
	svc := &service.Service{Auth: access.Policy{AllowPrivate: true}, Dir: dir, Mem: db, Find: db, Queue: db, Audit: db,
		Log: neo4jtest.Logger(t), Now: time.Now, Ontology: o,
		Limits: service.Limits{DefaultVisibility: "private", MaxContentBytes: 64 << 10, BatchMaxItems: 10, PageSizeDefault: 20, PageSizeMax: 100}}
	call := func(who string, h access.Host) service.Call {
		t.Helper()
		c, err := svc.Resolve(context.Background(), h, "", who+"-"+mark, nil, prefix+"-"+mark)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return svc, mark, call
}
