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

func (db *DB) newCommits() *batch.Batcher[*graph.Episode, error] {
	return batch.New(maxGroup, groupCommitTimeout, db.createTogether)
}

// commitEpisodes writes eps in the next group commits, in their order (one group
// while they fit in one), and returns when each has committed (or failed, or ctx has
// ended). A write whose request has ended before its group starts is left out; once
// its group has started it commits with the group, and a retry with its
// Idempotency-Key finds it.
func (db *DB) commitEpisodes(ctx context.Context, eps []*graph.Episode) []error {
	out, errs := db.commits.Do(ctx, eps...)
	for i, err := range errs {
		if err != nil {
			out[i] = db.storeError("episode_create", err)
		}
	}
	return out
}

// createTogether writes episodes in one transaction and returns each one's error:
// gone when its agent or team no longer exists; or the transaction's error (one
// episode's idempotency key taken meanwhile, or its public-write quota spent, fails
// them all, and the batch then writes each alone).
func (db *DB) createTogether(ctx context.Context, eps []*graph.Episode) ([]error, error) {
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
	created := map[string]bool{}
	_, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		clear(created)
		for _, e := range eps {
			if e.PublicQuota > 0 {
				if err := db.txPublicWrite(ctx, tx, e, e.CreatedAt); err != nil {
					return nil, err
				}
			}
		}
		records, err := db.txRun(ctx, tx, "episode_create", map[string]any{"episodes": rows})
		for _, r := range records {
			created[r.Values[0].(string)] = true
		}
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(eps))
	for i, e := range eps {
		if !created[e.UUID] {
			errs[i] = gone(e)
		}
	}
	return errs, nil
}

// createAlone writes e in a transaction of its own, within the group commit's time
// limit.
func (db *DB) createAlone(ctx context.Context, e *graph.Episode) error {
	ctx, cancel := context.WithTimeout(ctx, groupCommitTimeout)
	defer cancel()
	errs, err := db.createTogether(ctx, []*graph.Episode{e})
	if err != nil {
		return err
	}
	return errs[0]
}
