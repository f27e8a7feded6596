package client

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// Extraction is where the extraction of a set of memories stands: how many are done,
// failed for good, still queued or being extracted (Pending), or no longer there
// (Gone: deleted or expired since), and what extracting them has cost so far, summed
// over every memory still there (a pending one's finished attempts included).
type Extraction struct {
	Memories, Done, Failed, Pending, Gone int
	Cost                                  Cost
}

// Extracted reads each memory of ids (workers at once) until none is pending or wait
// has passed (0: read each once), and sums where they stand. A memory is read again
// only while it is pending, every poll; one answering 404 is Gone. It stops early
// with the sum so far when ctx ends or a read fails otherwise.
func Extracted(ctx context.Context, c *Client, ids []string, workers int, wait, poll time.Duration) (Extraction, error) {
	deadline := time.Now().Add(wait)
	last := make(map[string]*Stored, len(ids))
	pending := ids
	var err error
	for {
		var still []string
		still, err = readAll(ctx, c, pending, max(workers, 1), last)
		pending = still
		if err != nil || len(pending) == 0 || !time.Now().Add(poll).Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(poll):
		}
		if err != nil {
			break
		}
	}
	out := Extraction{Memories: len(ids)}
	for _, id := range ids {
		m, read := last[id]
		switch {
		case !read: // never read: the run stopped first
			out.Pending++
			continue
		case m == nil:
			out.Gone++
			continue
		case m.Status == "done":
			out.Done++
		case m.Status == "failed":
			out.Failed++
		default:
			out.Pending++
		}
		out.Cost = out.Cost.Add(m.Cost)
	}
	return out, err
}

// readAll reads ids into last (nil for one that is gone), workers at once, and returns
// those still queued or being extracted.
func readAll(ctx context.Context, c *Client, ids []string, workers int, last map[string]*Stored) ([]string, error) {
	var mu sync.Mutex
	var pending []string
	var first error
	next := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range next {
				m, err := c.Get(ctx, id)
				var apiErr *Error
				if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
					m, err = nil, nil
				}
				mu.Lock()
				switch {
				case err != nil:
					first = cmp.Or(first, err)
				default:
					last[id] = m
					if m != nil && m.Status != "done" && m.Status != "failed" {
						pending = append(pending, id)
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, id := range ids {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		next <- id
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return pending, first
}
