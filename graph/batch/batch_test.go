package batch_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/batch"
)

// recorder is a Func that records each group it is given and, while gate is set,
// holds each group until the test lets it go.
type recorder struct {
	mu      sync.Mutex
	groups  [][]int
	started chan []int    // each group as it starts
	gate    chan struct{} // nil: groups go at once
	fail    func(qs []int) error
}

func newRecorder(gated bool) *recorder {
	r := &recorder{started: make(chan []int, 100)}
	if gated {
		r.gate = make(chan struct{})
	}
	return r
}

func (r *recorder) do(ctx context.Context, qs []int) ([]int, error) {
	r.mu.Lock()
	r.groups = append(r.groups, slices.Clone(qs))
	r.mu.Unlock()
	r.started <- slices.Clone(qs)
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if r.fail != nil {
		if err := r.fail(qs); err != nil {
			return nil, err
		}
	}
	out := make([]int, len(qs))
	for i, q := range qs {
		out[i] = q * 10
	}
	return out, nil
}

func (r *recorder) seen() [][]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.groups)
}

// callAsync makes a Do call in a goroutine of its own and hands back its errors.
func callAsync(b *batch.Batcher[int, int], ctx context.Context, qs ...int) chan []error {
	done := make(chan []error, 1)
	go func() { _, errs := b.Do(ctx, qs...); done <- errs }()
	return done
}

func TestBatcher_LoneCallGoesAtOnce(t *testing.T) {
	r := newRecorder(false)
	b := batch.New(10, time.Minute, r.do)
	got, err := b.Call(context.Background(), 7)
	if err != nil || got != 70 {
		t.Fatalf("Call(7) = %d, %v; want 70, nil", got, err)
	}
	if g := r.seen(); len(g) != 1 || !slices.Equal(g[0], []int{7}) {
		t.Fatalf("groups = %v, want [[7]]", g)
	}
}

// Calls that arrive while a group runs go together in the next one, in the order
// they came, at most max to a group; each gets its own result.
func TestBatcher_CallsDuringAGroupGoTogether(t *testing.T) {
	r := newRecorder(true)
	b := batch.New(3, time.Minute, r.do)
	first := callAsync(b, context.Background(), 1)
	<-r.started // the first group holds [1]
	var results [][]int
	var mu sync.Mutex
	var wg sync.WaitGroup
	// One call of five in order: three go in one group, two in the next.
	wg.Go(func() {
		rs, errs := b.Do(context.Background(), 2, 3, 4, 5, 6)
		if err := errors.Join(errs...); err != nil {
			t.Errorf("Do: %v", err)
		}
		mu.Lock()
		results = append(results, rs)
		mu.Unlock()
	})
	waitFor(t, func() bool { return b.Pending() == 5 })
	close(r.gate)
	if errs := <-first; errs[0] != nil {
		t.Fatal(errs[0])
	}
	wg.Wait()
	want := [][]int{{1}, {2, 3, 4}, {5, 6}}
	if g := r.seen(); !slices.EqualFunc(g, want, slices.Equal) {
		t.Fatalf("groups = %v, want %v", g, want)
	}
	if !slices.Equal(results[0], []int{20, 30, 40, 50, 60}) {
		t.Fatalf("results = %v, want each call's own", results[0])
	}
}

// A group that fails as a whole is done again one call at a time, so that one call's
// fault fails that call only.
func TestBatcher_OneCallsFaultFailsThatCallOnly(t *testing.T) {
	r := newRecorder(true)
	bad := graph.Errorf(graph.EINVALID, "3 is taken")
	r.fail = func(qs []int) error {
		if slices.Contains(qs, 3) {
			return bad
		}
		return nil
	}
	b := batch.New(10, time.Minute, r.do)
	first := callAsync(b, context.Background(), 1)
	<-r.started
	rest := callAsync(b, context.Background(), 2, 3, 4)
	waitFor(t, func() bool { return b.Pending() == 3 })
	close(r.gate)
	<-first
	errs := <-rest
	if errs[0] != nil || !errors.Is(errs[1], bad) || errs[2] != nil {
		t.Fatalf("errors = %v; want only the second (3) to fail with %v", errs, bad)
	}
	want := [][]int{{1}, {2, 3, 4}, {2}, {3}, {4}}
	if g := r.seen(); !slices.EqualFunc(g, want, slices.Equal) {
		t.Fatalf("groups = %v, want %v", g, want)
	}
}

// An unavailable store fails the whole group at once: every call would meet it again,
// and one at a time each would wait as long as the group did.
func TestBatcher_UnavailableFailsTheGroupOnce(t *testing.T) {
	r := newRecorder(true)
	down := graph.Errorf(graph.EUNAVAILABLE, "the database is unavailable")
	r.fail = func([]int) error { return down }
	b := batch.New(10, time.Minute, r.do)
	first := callAsync(b, context.Background(), 1)
	<-r.started
	rest := callAsync(b, context.Background(), 2, 3, 4, 5)
	waitFor(t, func() bool { return b.Pending() == 4 })
	close(r.gate)
	<-first
	for i, err := range <-rest {
		if !errors.Is(err, down) {
			t.Errorf("call %d: %v, want %v", i, err, down)
		}
	}
	if g := r.seen(); len(g) != 2 {
		t.Fatalf("groups = %v; want the group of four tried once, not each alone", g)
	}
}

// A caller whose context ends stops waiting at once; a call whose context has ended
// before its group starts is left out of it; the others go on.
func TestBatcher_ContextOnTheWait(t *testing.T) {
	r := newRecorder(true)
	b := batch.New(10, time.Minute, r.do)
	ctx, cancel := context.WithCancel(context.Background())
	waiting := callAsync(b, ctx, 1)
	<-r.started // [1] runs with ctx's call in it
	gone := callAsync(b, ctx, 2)
	stays := callAsync(b, context.Background(), 3)
	waitFor(t, func() bool { return b.Pending() == 2 })
	cancel()
	if errs := <-waiting; !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("the waiting call returned %v; want context.Canceled before its group ends", errs[0])
	}
	if errs := <-gone; !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("the pending call returned %v; want context.Canceled", errs[0])
	}
	close(r.gate)
	if errs := <-stays; errs[0] != nil {
		t.Fatal(errs[0])
	}
	want := [][]int{{1}, {3}}
	if g := r.seen(); !slices.EqualFunc(g, want, slices.Equal) {
		t.Fatalf("groups = %v, want %v (2 left out)", g, want)
	}
}

// Close refuses new calls and waits for the groups under way, running and pending.
func TestBatcher_CloseWaitsForGroups(t *testing.T) {
	r := newRecorder(true)
	b := batch.New(1, time.Minute, r.do)
	first := callAsync(b, context.Background(), 1)
	<-r.started
	second := callAsync(b, context.Background(), 2)
	waitFor(t, func() bool { return b.Pending() == 1 })

	short, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Close(short); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close with an ended context while a group runs = %v; want context.Canceled", err)
	}
	if _, err := b.Call(context.Background(), 9); graph.ErrorCode(err) != graph.EUNAVAILABLE {
		t.Fatalf("a call after Close = %v; want %s", err, graph.EUNAVAILABLE)
	}
	closed := make(chan error, 1)
	go func() { closed <- b.Close(context.Background()) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v while a group was still running", err)
	case <-r.started: // the pending group [2] is not dropped
		t.Fatal("the pending group started while the first was held")
	default:
	}
	close(r.gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if e1, e2 := <-first, <-second; e1[0] != nil || e2[0] != nil {
		t.Fatalf("groups under way at Close: %v, %v; want both done", e1[0], e2[0])
	}
	want := [][]int{{1}, {2}}
	if g := r.seen(); !slices.EqualFunc(g, want, slices.Equal) {
		t.Fatalf("groups = %v, want %v", g, want)
	}
}

// A group runs within the Batcher's time limit, whatever its callers' contexts.
func TestBatcher_GroupTimeout(t *testing.T) {
	r := newRecorder(true) // never opened: the group waits for its context
	b := batch.New(10, 50*time.Millisecond, r.do)
	if _, err := b.Call(context.Background(), 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a group past its limit = %v; want context.DeadlineExceeded", err)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// A group's context names the contexts of the calls it holds, in order (tracing links
// a group's work to them); it is none of them: a caller's values do not reach it.
func TestBatcher_CallersOfAGroup(t *testing.T) {
	type key struct{}
	var callers [][]string
	var inherited bool
	var mu sync.Mutex
	gate := make(chan struct{})
	started := make(chan struct{}, 10)
	b := batch.New(10, time.Minute, func(ctx context.Context, qs []int) ([]int, error) {
		var names []string
		for _, c := range batch.Callers(ctx) {
			names = append(names, c.Value(key{}).(string))
		}
		mu.Lock()
		callers = append(callers, names)
		inherited = inherited || ctx.Value(key{}) != nil
		mu.Unlock()
		started <- struct{}{}
		<-gate
		return qs, nil
	})
	first := callAsync(b, context.WithValue(context.Background(), key{}, "a"), 1)
	<-started
	second := callAsync(b, context.WithValue(context.Background(), key{}, "b"), 2, 3)
	third := callAsync(b, context.WithValue(context.Background(), key{}, "c"), 4)
	waitFor(t, func() bool { return b.Pending() == 3 })
	close(gate)
	for _, done := range []chan []error{first, second, third} {
		if err := errors.Join(<-done...); err != nil {
			t.Fatal(err)
		}
	}
	if batch.Callers(context.Background()) != nil {
		t.Error("Callers of a context that is no group's is not nil")
	}
	mu.Lock()
	defer mu.Unlock()
	if inherited {
		t.Error("a group's context holds a caller's value")
	}
	if len(callers) != 2 || !slices.Equal(callers[0], []string{"a"}) ||
		!(slices.Equal(callers[1], []string{"b", "b", "c"}) || slices.Equal(callers[1], []string{"c", "b", "b"})) {
		t.Fatalf("callers = %v, want [[a] [b b c]] (one context per call, in the group's order)", callers)
	}
}
