package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Backoff is how a call is tried again after a failure worth another try. After the
// n-th failure it waits First doubled n-1 times, at most Max, plus up to a quarter of
// that at random, so that callers that failed together do not come back together;
// a failure that says how long to wait (a server's Retry-After: an error with a
// RetryAfter() time.Duration method) makes the wait at least that long. A wait is
// never shorter than First.
type Backoff struct {
	First, Max time.Duration
	Tries      int           // the most tries in all; 0: no limit
	Within     time.Duration // a failure later than this after the first one is not tried again; 0: no limit
	// Again reports whether a failure is worth another try; nil: every one.
	Again func(error) bool
	// Waiting, when set, hears each failure that will be tried again and the wait
	// before the next try.
	Waiting func(err error, wait time.Duration)
}

// Retry calls try until it succeeds, fails with an error Again refuses, Tries or
// Within run out, or ctx ends (with a try or during a wait). It returns try's last
// error, nil on success; a caller that must tell a stop for ctx apart asks ctx.Err().
func (b Backoff) Retry(ctx context.Context, try func() error) error {
	var first time.Time
	for n := 1; ; n++ {
		err := try()
		if n == 1 {
			first = time.Now()
		}
		switch {
		case err == nil, ctx.Err() != nil, b.Again != nil && !b.Again(err):
			return err
		case b.Tries > 0 && n >= b.Tries, b.Within > 0 && time.Since(first) > b.Within:
			return err
		}
		wait := b.wait(n, err)
		if b.Waiting != nil {
			b.Waiting(err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// wait is the wait after the n-th failure, err.
func (b Backoff) wait(n int, err error) time.Duration {
	d := b.First
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = max(min(d, b.Max), b.First)
	d += time.Duration(rand.Int64N(int64(d/4) + 1))
	var hint interface{ RetryAfter() time.Duration }
	if errors.As(err, &hint) {
		d = max(d, hint.RetryAfter())
	}
	return d
}
