package neo4jstore

import (
	"context"
	"sort"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/batch"
)

// Group commit. A write's time is mostly its commit, which waits for the transaction
// log to reach the disk; writes that arrive while a commit is under way wait for it
// and then go together in the next transaction, one commit for all of them
// (BENCHMARKS.md, the write path; the mechanism is graph/batch's). A lone write goes
// at once. Each write is acknowledged only after the commit that holds it.
const (
	maxGroup           = 100              // episodes in one transaction
	groupCommitTimeout = 30 * time.Second // for a group's transaction, retries included
)

func (db *DB) newCommits() *batch.Batcher[*graph.Episode, graph.CreateResult] {
	return batch.New(maxGroup, groupCommitTimeout, db.createTogether)
}

// commitEpisodes writes eps in the next group commits, in their order (one group
// while they fit in one), and returns when each has committed (or failed, or ctx has
// ended). A write whose request has ended before its group starts is left out; once
// its group has started it commits with the group, and a retry with its
// Idempotency-Key finds it.
func (db *DB) commitEpisodes(ctx context.Context, eps []*graph.Episode) []graph.CreateResult {
	out, errs := db.commits.Do(ctx, eps...)
	for i, err := range errs {
		if err != nil {
			err = db.storeError("episode_create", err)
		}
		out[i] = created(eps[i], out[i], err)
	}
	return out
}

// createTogether writes episodes in one transaction, each after looking up its
// idempotency key there, and returns each one's result: stored; the episode an
// earlier request with its key stored (replayed), or the key's reuse by another
// request; gone when its agent or team no longer exists. Or the transaction's error
// (one episode's idempotency key taken meanwhile by another transaction, or its
// public-write quota spent, fails them all, and the batch then writes each alone).
func (db *DB) createTogether(ctx context.Context, eps []*graph.Episode) ([]graph.CreateResult, error) {
	// One lock order for every group: by space.
	order := make([]int, len(eps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return eps[order[a]].GroupID < eps[order[b]].GroupID })
	rows := make([]any, len(eps))
	for k, i := range order {
		rows[k] = episodeParams(eps[i])
	}
	type answer struct {
		created bool
		prior   *graph.Episode
		used    bool
	}
	answers := map[string]answer{}
	_, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		clear(answers)
		for _, e := range eps {
			if e.PublicQuota == 0 {
				continue
			}
			// A replay is not another write: the quota counts only a key not yet used.
			if e.IdempotencyKey != "" {
				_, used, err := db.txByIdempotencyKey(ctx, tx, e)
				if err != nil || used {
					if err != nil {
						return nil, err
					}
					continue
				}
			}
			if err := db.txPublicWrite(ctx, tx, e, e.CreatedAt); err != nil {
				return nil, err
			}
		}
		records, err := db.txRun(ctx, tx, "episode_create", map[string]any{"episodes": rows})
		for _, r := range records {
			a := answer{created: r.Values[1] != nil}
			if n, ok := r.Values[2].(neo4j.Node); ok {
				a.prior = episodeFromNode(n)
			}
			a.used, _ = r.Values[3].(bool)
			answers[str(r.Values[0])] = a
		}
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	out := make([]graph.CreateResult, len(eps))
	for i, e := range eps {
		switch a := answers[e.UUID]; {
		case a.created:
			out[i] = graph.CreateResult{Episode: e}
		case a.used:
			out[i] = replay(a.prior, e)
		default:
			out[i] = graph.CreateResult{Err: gone(e)}
		}
	}
	return out, nil
}

// createAlone writes e in a transaction of its own, within the group commit's time
// limit.
func (db *DB) createAlone(ctx context.Context, e *graph.Episode) (graph.CreateResult, error) {
	ctx, cancel := context.WithTimeout(ctx, groupCommitTimeout)
	defer cancel()
	out, err := db.createTogether(ctx, []*graph.Episode{e})
	if err != nil {
		return graph.CreateResult{}, err
	}
	return out[0], nil
}
