package client

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// LoadOptions shapes a load test: Writers requesters, each with its own agent, write
// Episodes memories in all (each with an Idempotency-Key), at Rate requests a second
// in all (0: as fast as they can), with a search after every SearchEvery writes
// (0: none). ResendEvery sends every n-th write a second time with the same key, as a
// client that lost the answer would (0: never).
type LoadOptions struct {
	Writers     int
	Episodes    int
	Rate        float64
	SearchEvery int
	ResendEvery int
	Prefix      string                 // requester and agent ids start with it
	Retry       time.Duration          // how long a writer sends a write again, with its key, after a transport error or a 5xx; 0: never
	Progress    func(acknowledged int) // when set, called after each acknowledged write with the count so far
}

// LoadResult is what a load test saw, and what it found when it read everything back.
type LoadResult struct {
	Writes, Searches int
	Errors           map[string]int // answers that were not a success, by status or cause
	WriteP50         time.Duration
	WriteP99         time.Duration
	SearchP50        time.Duration
	SearchP99        time.Duration
	Acknowledged     int // distinct memory ids memgate answered 202 for
	Duplicates       int // a key sent again that got a different id: stored twice
	Lost             int // acknowledged, but not there when read back
	Unacknowledged   int // there when read back, but never acknowledged (a duplicate or a lost answer)
	Elapsed          time.Duration
}

// Load runs a load test against base with host key key, then reads every writer's
// memories back and compares them with what was acknowledged.
func Load(ctx context.Context, base, key string, o LoadOptions) (*LoadResult, error) {
	res := &LoadResult{Errors: map[string]int{}}
	writers := make([]*Client, o.Writers)
	for i := range writers {
		writers[i] = New(base, key, fmt.Sprintf("%s-w%02d", o.Prefix, i))
		if err := writers[i].CreateAgent(ctx, agentOf(o.Prefix, i)); err != nil {
			return nil, fmt.Errorf("creating the agent of writer %d: %w", i, err)
		}
	}
	var tokens <-chan time.Time
	if o.Rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) / o.Rate))
		defer t.Stop()
		tokens = t.C
	}
	wait := func() bool {
		if tokens == nil {
			return ctx.Err() == nil
		}
		select {
		case <-tokens:
			return true
		case <-ctx.Done():
			return false
		}
	}

	var mu sync.Mutex
	acked := make([]map[string]bool, o.Writers)
	idOfKey := map[string]string{}
	var writes, searches []time.Duration
	acknowledged := 0
	fail := func(err error) {
		var e *Error
		cause := "transport"
		if errors.As(err, &e) {
			cause = fmt.Sprint(e.Status)
		}
		mu.Lock()
		res.Errors[cause]++
		mu.Unlock()
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		acked[w] = map[string]bool{}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := writers[w]
			for i := w; i < o.Episodes; i += o.Writers {
				m := Memory{AgentID: agentOf(o.Prefix, w), Messages: fmt.Sprintf("Load memory %d of writer %d: %s met someone in Lisbon.", i, w, o.Prefix)}
				key := fmt.Sprintf("%s-%d", o.Prefix, i)
				sends := 1
				if o.ResendEvery > 0 && i%o.ResendEvery == 0 {
					sends = 2
				}
				for s := 0; s < sends; s++ {
					var a *Accepted
					err := resend(100*time.Millisecond, o.Retry).Retry(ctx, func() error {
						if !wait() {
							return ctx.Err()
						}
						t := time.Now()
						var err error
						a, err = c.Add(ctx, m, key)
						d := time.Since(t)
						mu.Lock()
						writes = append(writes, d)
						mu.Unlock()
						if err != nil && ctx.Err() == nil { // else the run is over: not the server's failure
							fail(err)
						}
						return err
					})
					if err != nil {
						if ctx.Err() != nil {
							return // the run is over
						}
						continue
					}
					mu.Lock()
					acked[w][a.ID] = true
					if first, seen := idOfKey[key]; seen && first != a.ID {
						res.Duplicates++
					}
					idOfKey[key] = a.ID
					acknowledged++
					if o.Progress != nil {
						o.Progress(acknowledged)
					}
					mu.Unlock()
				}
				if o.SearchEvery > 0 && (i/o.Writers)%o.SearchEvery == o.SearchEvery-1 {
					if !wait() {
						return
					}
					t := time.Now()
					err := c.Search(ctx, map[string]any{"agent_id": m.AgentID, "query": "Lisbon", "include": []string{"episodes"}}, nil)
					d := time.Since(t)
					mu.Lock()
					searches = append(searches, d)
					mu.Unlock()
					if err != nil && ctx.Err() == nil {
						fail(err)
					}
				}
			}
		}(w)
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Writes, res.Searches = len(writes), len(searches)
	res.WriteP50, res.WriteP99 = percentiles(writes)
	res.SearchP50, res.SearchP99 = percentiles(searches)

	// Read everything back with a fresh context: an interrupted run is still checked.
	check := context.WithoutCancel(ctx)
	for w, c := range writers {
		stored := map[string]bool{}
		for cursor := ""; ; {
			page, err := c.List(check, agentOf(o.Prefix, w), "", cursor, 100)
			if err != nil {
				return res, fmt.Errorf("reading back writer %d: %w", w, err)
			}
			for _, m := range page.Items {
				stored[m.ID] = true
			}
			if cursor = page.NextCursor; !page.HasMore {
				break
			}
		}
		res.Acknowledged += len(acked[w])
		for id := range acked[w] {
			if !stored[id] {
				res.Lost++
			}
		}
		for id := range stored {
			if !acked[w][id] {
				res.Unacknowledged++
			}
		}
	}
	return res, nil
}

// retryable is a failure a client should send again with the same key: the answer was
// lost (transport) or the server could not serve it (5xx).
func retryable(err error) bool {
	var e *Error
	return !errors.As(err, &e) || e.Status >= 500
}

// resend is how import and loadtest send a write again with its key after a
// retryable failure: first after first, the waits doubling up to 5 s, for within
// after the first failure (0: never).
func resend(first, within time.Duration) Backoff {
	b := Backoff{First: first, Max: 5 * time.Second, Within: within, Again: retryable}
	if within <= 0 {
		b.Tries = 1
	}
	return b
}

func agentOf(prefix string, w int) string { return fmt.Sprintf("%s-a%02d", prefix, w) }

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2], d[len(d)*99/100]
}
