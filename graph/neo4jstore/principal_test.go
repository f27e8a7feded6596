package neo4jstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestResolvePrincipal_Together: requests resolved at the same moment share reads
// (one query for a group), and each gets its own requester's facts: its agents, its
// team and role, its shares and delegations, the asserted teams that exist. A grant
// revoked before a call is gone from that call's answer while other requests keep
// the reads busy: nothing read for an earlier group answers a later call.
func TestResolvePrincipal_Together(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	const n = 40
	requester := func(i int) string { return fmt.Sprintf("pr-%s-%02d", run, i) }
	agent := func(i int) string { return fmt.Sprintf("pr-agent-%s-%02d", run, i) }
	team := "pr-team-" + run
	if err := db.CreateTeam(ctx, graph.DefaultOrg, team, requester(0), nil); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: agent(i), OwnerID: requester(i), CreatedAt: time.Now()}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Every third requester is in the team (an admin when also even), and requester i
	// holds a share of agent i+1's space; every fifth a delegation of agent i+2.
	for i := range n {
		if i%3 == 0 {
			role := graph.Role("member")
			if i%2 == 0 {
				role = "admin"
			}
			if err := db.SetMember(ctx, graph.DefaultOrg, team, requester(i), role, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.SetShare(ctx, graph.DefaultOrg, agent((i+1)%n), requester(i), true, nil, nil); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			if err := db.SetDelegate(ctx, graph.DefaultOrg, agent((i+2)%n), requester((i+2)%n), requester(i), "writer", nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(i int, f graph.PrincipalFacts) error {
		want := graph.PrincipalFacts{Owns: []string{agent(i)}, SharedWith: []string{agent((i + 1) % n)}, Teams: map[string]graph.Role{},
			Asserted: []string{}}
		if i%3 == 0 {
			want.Teams[team] = "member"
			if i%2 == 0 {
				want.Teams[team] = "admin"
			}
		}
		if i%4 == 0 {
			want.Asserted = []string{team}
		}
		var delegated []string
		if i%5 == 0 {
			delegated = []string{agent((i + 2) % n)}
		}
		switch {
		case !slices.Equal(f.Owns, want.Owns), !slices.Equal(f.SharedWith, want.SharedWith),
			fmt.Sprint(f.Teams) != fmt.Sprint(want.Teams), !slices.Equal(f.Asserted, want.Asserted),
			!slices.Equal(f.Delegated, delegated), len(f.ExpiredShares) != 0, f.Promoter:
			return fmt.Errorf("requester %d: %+v, want %+v delegated %v", i, f, want, delegated)
		}
		return nil
	}
	queries := func() int64 {
		var c int64
		db.QueryStats(func(name string, s *neo4jstore.QueryStat) {
			if name == "principal_resolve" {
				c = s.Count.Load()
			}
		})
		return c
	}
	resolve := func(i int) (graph.PrincipalFacts, error) {
		var asserted []string
		if i%4 == 0 {
			asserted = []string{team, "pr-none-" + run}
		}
		return db.ResolvePrincipal(ctx, graph.DefaultOrg, requester(i), asserted...)
	}

	before := queries()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, 2*n)
	for k := range 2 * n {
		wg.Go(func() {
			<-start
			f, err := resolve(k % n)
			if err == nil {
				err = check(k%n, f)
			}
			errs[k] = err
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if q := queries() - before; q >= 2*n {
		t.Errorf("%d principals resolved at once took %d queries; reading them together takes fewer", 2*n, q)
	} else {
		t.Logf("%d principals resolved at once in %d queries", 2*n, q)
	}

	// Revocations under load: the others resolve in a loop meanwhile.
	stop := make(chan struct{})
	var busy sync.WaitGroup
	for i := 1; i < 20; i++ {
		busy.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := resolve(i); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	defer func() { close(stop); busy.Wait() }()
	for round := range 5 {
		granted := round%2 == 1
		if err := db.SetShare(ctx, graph.DefaultOrg, agent(1), requester(0), granted, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := db.SetMember(ctx, graph.DefaultOrg, team, requester(0), map[bool]graph.Role{true: "admin"}[granted], nil); err != nil {
			t.Fatal(err)
		}
		f, err := resolve(0)
		if err != nil {
			t.Fatal(err)
		}
		if has := slices.Contains(f.SharedWith, agent(1)); has != granted {
			t.Errorf("round %d: share granted %v, the next resolution has it: %v", round, granted, has)
		}
		if _, has := f.Teams[team]; has != granted {
			t.Errorf("round %d: membership %v, the next resolution has it: %v", round, granted, has)
		}
	}
}
