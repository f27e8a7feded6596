package neo4jstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestCreateWebhook_LimitsHoldUnderRace: registrations sent at once are counted one
// after another, in the transaction that stores them: one requester's twelve at once
// store exactly its limit; twelve requesters of one host key following one agent
// store exactly the key's limit for that agent; one requester's two registrations of
// one URL for one agent store one webhook (the other is ECONFLICT). Each round races
// afresh, raceRounds of them.
func TestCreateWebhook_LimitsHoldUnderRace(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	org := graph.DefaultOrg
	hook := func(requester, key, agent, url string) *graph.Webhook {
		return &graph.Webhook{Org: org, ID: uuid.NewString(), URL: url, Events: graph.MemoryEvents, Agent: agent,
			Requester: requester, HostKey: key, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			GroupIDs: []string{org.Private(agent).GroupID(), org.Public(agent).GroupID()}, CreatedAt: time.Now()}
	}
	race := func(n int, limits graph.WebhookLimits, make func(i int) *graph.Webhook) (stored int, refused map[string]int) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		refused = map[string]int{}
		for i := range n {
			wg.Go(func() {
				err := db.CreateWebhook(ctx, make(i), limits)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					stored++
				} else {
					refused[graph.ErrorCode(err)]++
				}
			})
		}
		wg.Wait()
		return stored, refused
	}
	for round := range raceRounds {
		agent := fmt.Sprintf("hooked-%s-%d", run, round)
		if err := db.CreateAgent(ctx, org, &graph.Agent{ID: agent, OwnerID: "owner-" + run, CreatedAt: time.Now()}, nil); err != nil {
			t.Fatal(err)
		}
		requester := fmt.Sprintf("req-%s-%d", run, round)
		stored, refused := race(12, graph.WebhookLimits{PerRequester: 5, PerTarget: 100}, func(i int) *graph.Webhook {
			return hook(requester, "key-"+run, agent, fmt.Sprintf("https://hooks.example.com/%d", i))
		})
		if stored != 5 || refused[graph.EINVALID] != 7 {
			t.Fatalf("round %d: one requester's 12 at once with a limit of 5: %d stored, refused %v", round, stored, refused)
		}
		stored, refused = race(12, graph.WebhookLimits{PerRequester: 50, PerTarget: 4}, func(i int) *graph.Webhook {
			return hook(fmt.Sprintf("many-%s-%d-%d", run, round, i), "fan-"+run, agent, fmt.Sprintf("https://hooks.example.com/fan/%d", i))
		})
		if stored != 4 || refused[graph.EINVALID] != 8 {
			t.Fatalf("round %d: one key's 12 requesters on one agent with a limit of 4: %d stored, refused %v", round, stored, refused)
		}
		stored, refused = race(4, graph.WebhookLimits{PerRequester: 50, PerTarget: 100}, func(i int) *graph.Webhook {
			return hook(fmt.Sprintf("twice-%s-%d", requester, i%2), "key-"+run, agent, "https://hooks.example.com/twice")
		})
		if stored != 1 || refused[graph.ECONFLICT] != 3 {
			t.Fatalf("round %d: one key's same URL and agent four times at once, by two requesters: %d stored, refused %v", round, stored, refused)
		}
	}
}
