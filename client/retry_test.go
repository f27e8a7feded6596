package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var errDown = errors.New("down")

// waitHint is a failure that says how long to wait, as a 429's Retry-After does.
type waitHint time.Duration

func (h waitHint) Error() string             { return "wait" }
func (h waitHint) RetryAfter() time.Duration { return time.Duration(h) }

// tries calls Retry with a try that fails with fail n times, then succeeds; it returns
// when each try began and Retry's error.
func tries(ctx context.Context, b Backoff, n int, fail error) ([]time.Time, error) {
	var at []time.Time
	err := b.Retry(ctx, func() error {
		at = append(at, time.Now())
		if len(at) <= n {
			return fail
		}
		return nil
	})
	return at, err
}

func TestBackoff_Waits(t *testing.T) {
	b := Backoff{First: 100 * time.Millisecond, Max: time.Second}
	for n, nominal := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond,
		4: 800 * time.Millisecond, 5: time.Second, 60: time.Second} {
		for range 100 {
			if d := b.wait(n, errDown); d < nominal || d > nominal*5/4 {
				t.Fatalf("wait after failure %d: %v, want %v to a quarter more", n, d, nominal)
			}
		}
	}
	if d := (Backoff{First: time.Second}).wait(3, errDown); d < time.Second || d > 1250*time.Millisecond {
		t.Errorf("with no Max: %v, want First", d)
	}
	if d := b.wait(1, waitHint(3*time.Second)); d != 3*time.Second {
		t.Errorf("after a Retry-After of 3 s: %v", d)
	}
	if d := b.wait(1, waitHint(time.Millisecond)); d < 100*time.Millisecond {
		t.Errorf("a Retry-After shorter than the backoff made the wait %v", d)
	}
}

func TestBackoff_Retry(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		var heard []time.Duration
		b := Backoff{First: time.Millisecond, Max: 4 * time.Millisecond,
			Waiting: func(err error, wait time.Duration) { heard = append(heard, wait) }}
		if at, err := tries(ctx, b, 3, errDown); err != nil || len(at) != 4 || len(heard) != 3 {
			t.Errorf("err %v after %d tries, %d waits heard", err, len(at), len(heard))
		}
	})
	t.Run("Tries", func(t *testing.T) {
		if at, err := tries(ctx, Backoff{First: time.Millisecond, Tries: 3}, 10, errDown); err != errDown || len(at) != 3 {
			t.Errorf("err %v after %d tries, want the failure after 3", err, len(at))
		}
	})
	t.Run("NotAgain", func(t *testing.T) {
		b := Backoff{First: time.Millisecond, Again: func(err error) bool { return err != errDown }}
		if at, err := tries(ctx, b, 10, errDown); err != errDown || len(at) != 1 {
			t.Errorf("err %v after %d tries, want one", err, len(at))
		}
	})
	t.Run("Within", func(t *testing.T) {
		b := Backoff{First: 10 * time.Millisecond, Max: 20 * time.Millisecond, Within: 200 * time.Millisecond}
		at, err := tries(ctx, b, 1000, errDown)
		last := at[len(at)-1].Sub(at[0])
		if err != errDown || last < 200*time.Millisecond || last > 200*time.Millisecond+25*time.Millisecond+100*time.Millisecond {
			t.Errorf("err %v, last try %v after the first, want the failure about 200 ms on", err, last)
		}
		if before := at[len(at)-2].Sub(at[0]); before > 200*time.Millisecond {
			t.Errorf("a failure %v after the first was tried again", before)
		}
	})
	t.Run("ContextEnds", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		at, err := tries(ctx, Backoff{First: time.Hour}, 10, errDown)
		if err != errDown || len(at) != 1 || time.Since(start) > 5*time.Second {
			t.Errorf("err %v after %d tries in %v, want the try's error at once when ctx ends", err, len(at), time.Since(start))
		}
	})
	t.Run("RetryAfter", func(t *testing.T) {
		at, err := tries(ctx, Backoff{First: time.Millisecond}, 1, waitHint(300*time.Millisecond))
		if err != nil || len(at) != 2 || at[1].Sub(at[0]) < 300*time.Millisecond {
			t.Errorf("err %v, %d tries, the second %v after the first, want 300 ms at least", err, len(at), at[1].Sub(at[0]))
		}
	})
}

// TestClient_TooManyRequests: a 429 is sent again after its Retry-After (a second at
// least), five times at most; the sixth is the caller's Error.
func TestClient_TooManyRequests(t *testing.T) {
	// server answers 429 with Retry-After, after the first n; it returns when each call came.
	server := func(t *testing.T, n int, retryAfter string) (*Client, func() []time.Time) {
		var mu sync.Mutex
		var at []time.Time
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			at = append(at, time.Now())
			over := len(at) <= n
			mu.Unlock()
			if over {
				w.Header().Set("Retry-After", retryAfter)
				w.WriteHeader(http.StatusTooManyRequests)
				w.Write([]byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
				return
			}
			w.Write([]byte(`{"id":"m1"}`))
		}))
		t.Cleanup(srv.Close)
		return New(srv.URL, "", "r"), func() []time.Time {
			mu.Lock()
			defer mu.Unlock()
			return append([]time.Time(nil), at...)
		}
	}
	add := func(ctx context.Context, c *Client) (*Accepted, error) {
		return c.Add(ctx, Memory{AgentID: "a", Messages: "x"}, "")
	}
	t.Run("RetryAfter", func(t *testing.T) {
		t.Parallel()
		c, calls := server(t, 2, "2")
		a, err := add(context.Background(), c)
		at := calls()
		if err != nil || a.ID != "m1" || len(at) != 3 {
			t.Fatalf("%+v, %v after %d calls", a, err, len(at))
		}
		for i := 1; i < 3; i++ {
			if gap := at[i].Sub(at[i-1]); gap < 2*time.Second {
				t.Errorf("call %d came %v after the one before, under the Retry-After of 2 s", i+1, gap)
			}
		}
	})
	t.Run("SixthIsAnError", func(t *testing.T) {
		t.Parallel()
		c, calls := server(t, 100, "0")
		_, err := add(context.Background(), c)
		at := calls()
		var e *Error
		if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || e.Code != "rate_limited" || len(at) != 6 {
			t.Fatalf("%v after %d calls, want the sixth 429 as an Error", err, len(at))
		}
		if gap := at[5].Sub(at[0]); gap < 5*time.Second {
			t.Errorf("six calls in %v: under a second apart with Retry-After 0", gap)
		}
	})
	t.Run("ContextEnds", func(t *testing.T) {
		t.Parallel()
		c, calls := server(t, 100, "60")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if _, err := add(ctx, c); err != context.DeadlineExceeded || len(calls()) != 1 {
			t.Errorf("%v after %d calls, want the context's end during the wait", err, len(calls()))
		}
	})
}

// TestImport_SendsAgain: a batch that met a 5xx is sent again with its key within
// Retry, and Retrying hears each error as the batch goes again; with Retry 0 the
// import stops at the first.
func TestImport_SendsAgain(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		n := len(keys)
		mu.Unlock()
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"code":"unavailable","message":"neo4j"}}`))
			return
		}
		w.Write([]byte(`{"results":[{"index":0,"id":"m1","status":"queued"}]}`))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "m.jsonl")
	if err := os.WriteFile(path, []byte(`{"agent_id":"a","content":"one"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := New(srv.URL, "", "r")

	sum, err := Import(context.Background(), c, ImportOptions{Path: path, BatchSize: 10, Workers: 1})
	if err == nil || sum.Accepted != 0 || len(keys) != 1 {
		t.Errorf("with Retry 0: %+v, %v after %d calls, want a stop at the first 503", sum, err, len(keys))
	}

	var heard int
	sum, err = Import(context.Background(), c, ImportOptions{Path: path, BatchSize: 10, Workers: 1, Retry: time.Minute,
		Retrying: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			if heard++; len(keys) != 1+heard || !strings.Contains(err.Error(), "503") {
				t.Errorf("heard %v after %d calls", err, len(keys))
			}
		}})
	if err != nil || sum.Accepted != 1 || heard != 1 || len(keys) != 3 || keys[1] != keys[2] {
		t.Errorf("%+v, %v: %d calls (keys %q), %d heard", sum, err, len(keys), keys, heard)
	}
}
