// Package batch gathers the calls many goroutines make at the same time into one call
// of a function, so that a busy service pays one database transaction or round trip
// for many of them and an idle one pays no waiting.
//
// A call that finds no group running starts one at once with whatever is pending
// (often only itself). Calls that arrive while a group runs wait for it, and then go
// together in the next group: one commit for all of them. This is the group commit of
// the writes (graph/neo4jstore) and of the extraction results and reads (extract).
package batch

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/memgate/memgate/graph"
)

// Func does a group of calls at once. It returns one result per call, in order, or
// an error that is the whole group's.
type Func[Q, R any] func(ctx context.Context, qs []Q) ([]R, error)

// ErrClosed is the error of a call made after Close: the service is shutting down.
var ErrClosed = graph.Errorf(graph.EUNAVAILABLE, "the service is shutting down; retry later")

// Batcher runs Func over groups of at most max calls. Its zero value is not usable;
// make one with New.
type Batcher[Q, R any] struct {
	do      Func[Q, R]
	max     int
	timeout time.Duration

	mu      sync.Mutex
	pending []*call[Q, R]
	busy    bool // a group is running; it takes pending next
	closed  bool
	running sync.WaitGroup
}

type call[Q, R any] struct {
	ctx  context.Context
	q    Q
	done chan result[R]
}

type result[R any] struct {
	r   R
	err error
}

// New returns a Batcher that runs do over groups of at most max calls, each group
// within timeout. A group's context is not any one caller's: a caller that gives up
// waiting does not cancel the others' work.
func New[Q, R any](max int, timeout time.Duration, do Func[Q, R]) *Batcher[Q, R] {
	return &Batcher[Q, R]{do: do, max: max, timeout: timeout}
}

// Call does q in the next group and returns its result.
func (b *Batcher[Q, R]) Call(ctx context.Context, q Q) (R, error) {
	rs, errs := b.Do(ctx, q)
	return rs[0], errs[0]
}

// Do does qs in the next groups, in their order (in one group while they fit in
// one), and returns each one's result and error. A call whose ctx has ended before its
// group starts is left out with ctx's error; once its group has started it goes with
// the group, and Do returns as soon as ctx ends, without waiting for it.
func (b *Batcher[Q, R]) Do(ctx context.Context, qs ...Q) ([]R, []error) {
	rs, errs := make([]R, len(qs)), make([]error, len(qs))
	calls := make([]*call[Q, R], len(qs))
	for i, q := range qs {
		calls[i] = &call[Q, R]{ctx: ctx, q: q, done: make(chan result[R], 1)}
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		for i := range errs {
			errs[i] = ErrClosed
		}
		return rs, errs
	}
	b.pending = append(b.pending, calls...)
	if !b.busy && len(b.pending) > 0 {
		b.busy = true
		b.running.Add(1)
		go b.loop()
	}
	b.mu.Unlock()
	for i, c := range calls {
		select {
		case res := <-c.done:
			rs[i], errs[i] = res.r, res.err
		case <-ctx.Done():
			errs[i] = ctx.Err()
		}
	}
	return rs, errs
}

// loop runs groups while calls are pending.
func (b *Batcher[Q, R]) loop() {
	defer b.running.Done()
	for {
		b.mu.Lock()
		if len(b.pending) == 0 {
			b.busy = false
			b.mu.Unlock()
			return
		}
		n := min(len(b.pending), b.max)
		var group []*call[Q, R]
		for _, c := range b.pending[:n] {
			if err := c.ctx.Err(); err != nil {
				c.done <- result[R]{err: err}
				continue
			}
			group = append(group, c)
		}
		b.pending = b.pending[n:]
		b.mu.Unlock()
		if len(group) > 0 {
			b.run(group)
		}
	}
}

// run does one group. When the group fails as a whole, each call is done alone, so
// that one call's fault (a constraint, a quota, a bad value) fails only that call;
// unless the store is unavailable, which every call would meet again: then each gets
// that error at once, not after another wait as long.
func (b *Batcher[Q, R]) run(group []*call[Q, R]) {
	qs := make([]Q, len(group))
	for i, c := range group {
		qs[i] = c.q
	}
	ctxs := make([]context.Context, len(group))
	for i, c := range group {
		ctxs[i] = c.ctx
	}
	rs, err := b.group(ctxs, qs)
	if err != nil && len(group) > 1 && graph.ErrorCode(err) != graph.EUNAVAILABLE {
		for _, c := range group {
			b.run([]*call[Q, R]{c})
		}
		return
	}
	for i, c := range group {
		if err == nil && i >= len(rs) {
			err = errors.New("batch: fewer results than calls")
		}
		if err != nil {
			c.done <- result[R]{err: err}
			continue
		}
		c.done <- result[R]{r: rs[i]}
	}
}

func (b *Batcher[Q, R]) group(callers []context.Context, qs []Q) ([]R, error) {
	ctx := context.WithValue(context.Background(), callersKey{}, callers)
	if b.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.timeout)
		defer cancel()
	}
	return b.do(ctx, qs)
}

type callersKey struct{}

// Callers returns the contexts of the calls in the group whose context ctx is (the one
// a Func is given), in the group's order; nil for any other context. The group's
// context is none of them (see New), but its work is theirs: tracing links a group's
// queries to the calls they serve (graph/neo4jstore).
func Callers(ctx context.Context) []context.Context {
	callers, _ := ctx.Value(callersKey{}).([]context.Context)
	return callers
}

// Close refuses new calls and waits until the groups running or pending have ended,
// or ctx has.
func (b *Batcher[Q, R]) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	done := make(chan struct{})
	go func() { b.running.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
