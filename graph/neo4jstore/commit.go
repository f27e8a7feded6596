package neo4jstore

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

// Group commit. A write's time is mostly its commit, which waits for the transaction
// log to reach the disk; writes that arrive while a commit is under way wait for it
// and then go together in the next transaction, one commit for all of them
// (BENCHMARKS.md, the write path). A lone write goes at once, as before. Each
// write is acknowledged only after the commit that holds it.
const (
	maxGroup           = 100              // episodes in one transaction
	groupCommitTimeout = 30 * time.Second // for a group's transaction, retries included
)

type groupCommit struct {
	mu      sync.Mutex
	pending []*pendingEpisode
	busy    bool // a goroutine is committing; it takes pending next
}

type pendingEpisode struct {
	ctx  context.Context
	e    *graph.Episode
	done chan error
}

// commitEpisodes writes eps in the next group commits, in their order (one group
// while they fit in one), and returns when each has committed (or failed). A write
// whose request has ended before its group starts is left out; once its group has
// started it commits with the group, and a retry with its Idempotency-Key finds it.
func (db *DB) commitEpisodes(ctx context.Context, eps []*graph.Episode) []error {
	if len(eps) == 0 {
		return nil
	}
	ps := make([]*pendingEpisode, len(eps))
	for i, e := range eps {
		ps[i] = &pendingEpisode{ctx: ctx, e: e, done: make(chan error, 1)}
	}
	c := &db.commits
	c.mu.Lock()
	c.pending = append(c.pending, ps...)
	lead := !c.busy
	c.busy = true
	c.mu.Unlock()
	if lead {
		db.commitNext()
	}
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = <-p.done
	}
	return errs
}

// commitNext commits the pending episodes (up to maxGroup), then hands what arrived
// meanwhile to a goroutine of its own, so that the caller's write returns after its
// own commit.
func (db *DB) commitNext() {
	c := &db.commits
	c.mu.Lock()
	n := min(len(c.pending), maxGroup)
	var group []*pendingEpisode
	for _, p := range c.pending[:n] {
		if err := p.ctx.Err(); err != nil {
			p.done <- err
			continue
		}
		group = append(group, p)
	}
	c.pending = c.pending[n:]
	c.mu.Unlock()
	eps := make([]*graph.Episode, len(group))
	for i, p := range group {
		eps[i] = p.e
	}
	if len(eps) > 0 {
		for i, err := range db.createTogether(eps) {
			group[i].done <- err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) > 0 {
		go db.commitNext()
	} else {
		c.busy = false
	}
}

// createTogether writes episodes in one transaction and returns each one's error:
// gone when its agent or team no longer exists. When the transaction fails (one
// episode's idempotency key taken meanwhile fails them all), each is written alone,
// unless the database was unavailable: then each gets that error.
// An episode counted against a public-write quota is written alone, since a refusal
// must undo its count.
func (db *DB) createTogether(eps []*graph.Episode) []error {
	ctx, cancel := context.WithTimeout(context.Background(), groupCommitTimeout)
	defer cancel()
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
	errs := make([]error, len(eps))
	// One by one only for what may be one write's fault (a key taken meanwhile); an
	// unreachable database fails the whole group at once, not each of its writes
	// after another wait as long.
	if err != nil && len(eps) > 1 && graph.ErrorCode(err) != graph.EUNAVAILABLE {
		for i, e := range eps {
			errs[i] = db.createTogether([]*graph.Episode{e})[0]
		}
		return errs
	}
	for i, e := range eps {
		switch {
		case err != nil:
			errs[i] = err
		case !created[e.UUID]:
			errs[i] = gone(e)
		}
	}
	return errs
}
