package handlers_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// teamWorld is the small world of the governance tests on srv: an owner with an agent
// and a team it writes, another requester, and an admin, their ids marked with prefix
// and a random suffix (erased when the test ends).
type teamWorld struct {
	owner, other, admin client
	agent, team         string
}

func newTeamWorld(t *testing.T, base, prefix string) teamWorld {
	t.Helper()
	suffix := randomSuffix()
	neo4jtest.Forget(t, suffix)
	as := func(who, key string) client {
		return client{t: t, base: base, key: matrixKeys[key], requester: prefix + "-" + who + "-" + suffix}
	}
	w := teamWorld{owner: as("owner", "trusted"), other: as("other", "trusted"), admin: as("root", "admin"),
		agent: prefix + "-agent-" + suffix, team: prefix + "-team-" + suffix}
	w.owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": w.agent}, nil)
	w.admin.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": w.team}, nil)
	w.admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+w.team+"/members/"+w.owner.requester, map[string]any{"role": "writer"}, nil)
	return w
}

// sweepTwice runs two expiry sweeps at once, as two memgate processes would.
func sweepTwice(t *testing.T, svc *service.Service) {
	t.Helper()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := svc.SweepExpired(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
