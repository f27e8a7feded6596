package extract

import (
	"context"
	"fmt"
	"time"
)

// A chat call's time follows what it asks for and how fast the server writes: it has
// llm.timeout to begin its answer and read its first paceTokens tokens, and then as
// long as the rest of its token budget takes at the pace its tokens have come so far,
// twice over. A small model on two cores writing six tokens a second keeps going for
// the minutes its budget takes there, where a fixed minute cut off its answers of 300
// tokens; a server that stops writing is cut off once the pace it kept runs out. An
// embedding call has embedder.timeout in all. No timeout set: no clock.
const (
	paceTokens = 8 // tokens read before their pace is trusted
	paceMargin = 2 // the budget's time at the pace read, times this
)

// errOutran is a chat call cut off by its deadline: a timeout to classifyLLMError.
var errOutran = fmt.Errorf("the answer outran its time (llm.timeout to begin, then its token budget at the pace read): %w",
	context.DeadlineExceeded)

// callDeadline is when a chat call that began at start, read its first token at
// first and read tokens of its budget by now, is cut off.
func callDeadline(start, first, now time.Time, read, budget int, floor time.Duration) time.Time {
	least := start.Add(floor)
	if read < paceTokens || !now.After(first) {
		return least
	}
	pace := now.Sub(first) / time.Duration(read)
	if at := now.Add(paceMargin * pace * time.Duration(max(budget-read, 0))); at.After(least) {
		return at
	}
	return least
}

// deadline cuts a chat call off at callDeadline, moved on as its tokens arrive (read).
type deadline struct {
	start, first time.Time
	read, budget int
	floor        time.Duration
	timer        *time.Timer
}

// watch starts the clock of a call with budget tokens: the context it returns is
// cancelled with errOutran when the clock runs out; stop ends the clock with the call.
func watch(ctx context.Context, floor time.Duration, budget int) (_ context.Context, d *deadline, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	d = &deadline{start: time.Now(), budget: budget, floor: floor}
	if floor <= 0 { // no llm.timeout: no clock
		return ctx, d, func() { cancel(nil) }
	}
	d.timer = time.AfterFunc(floor, func() { cancel(errOutran) })
	return ctx, d, func() { d.timer.Stop(); cancel(nil) }
}

// token counts a token of the answer and moves the deadline by it.
func (d *deadline) token() {
	now := time.Now()
	if d.read == 0 {
		d.first = now
	}
	d.read++
	if d.timer != nil {
		d.timer.Reset(time.Until(callDeadline(d.start, d.first, now, d.read, d.budget, d.floor)))
	}
}

// outran returns errOutran when ctx (watch's) was cut off by its deadline, else err.
func outran(ctx context.Context, err error) error {
	if err != nil && context.Cause(ctx) == errOutran {
		return errOutran
	}
	return err
}
