package extract

import "context"

// batcher gathers the calls many workers make at the same time into one call of do,
// so a busy pipeline pays one database round trip for many episodes and an idle one
// pays no waiting: whatever is queued when a call starts goes into it.
type batcher[Q, R any] struct {
	calls chan batchCall[Q, R]
	do    func(context.Context, []Q) ([]R, error)
	max   int
}

type batchCall[Q, R any] struct {
	q    Q
	done chan batchResult[R]
}

type batchResult[R any] struct {
	r   R
	err error
}

func newBatcher[Q, R any](max int, do func(context.Context, []Q) ([]R, error)) *batcher[Q, R] {
	return &batcher[Q, R]{calls: make(chan batchCall[Q, R]), do: do, max: max}
}

// run serves calls until ctx ends.
func (b *batcher[Q, R]) run(ctx context.Context) {
	for {
		var batch []batchCall[Q, R]
		select {
		case <-ctx.Done():
			return
		case c := <-b.calls:
			batch = append(batch, c)
		}
		for more := true; more && len(batch) < b.max; {
			select {
			case c := <-b.calls:
				batch = append(batch, c)
			default:
				more = false
			}
		}
		qs := make([]Q, len(batch))
		for i, c := range batch {
			qs[i] = c.q
		}
		rs, err := b.do(ctx, qs)
		for i, c := range batch {
			if err != nil || i >= len(rs) {
				var zero R
				c.done <- batchResult[R]{zero, err}
			} else {
				c.done <- batchResult[R]{rs[i], nil}
			}
		}
	}
}

// call hands q to the running batch loop and waits for its own result.
func (b *batcher[Q, R]) call(ctx context.Context, q Q) (R, error) {
	done := make(chan batchResult[R], 1)
	select {
	case b.calls <- batchCall[Q, R]{q: q, done: done}:
	case <-ctx.Done():
		var zero R
		return zero, ctx.Err()
	}
	res := <-done
	return res.r, res.err
}
