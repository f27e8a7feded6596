package handlers_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/handlers"
	"github.com/memgate/memgate/service"
)

// TestRateLimit: a host key over its rate gets 429 rate_limited with Retry-After in
// the one error shape, and another host key is not slowed by it. The rate is one
// request an hour, so no token comes back while the test runs, however slow the
// machine: exactly the requests beyond the burst are limited.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	ring, err := access.NewKeyring([]access.KeySpec{
		{Name: "busy", SHA256: access.HashKey("busy-key"), Trusted: true},
		{Name: "calm", SHA256: access.HashKey("calm-key"), Trusted: true},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const perSecond, burst = 1.0 / 3600, 3
	srv := httptest.NewServer(handlers.New(handlers.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Keys: ring,
		Service: &service.Service{}, BodyLimit: "1M", HandlerTimeout: time.Second, Version: "test", RateLimit: perSecond, RateBurst: burst}))
	defer srv.Close()
	whoami := func(key string) (*http.Response, []byte) {
		return do(t, "GET", srv.URL+"/v1/whoami", map[string]string{"Authorization": "Bearer " + key}, "")
	}
	for i := 0; i < burst; i++ {
		if resp, body := whoami("busy-key"); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d, within the burst: %d %s", i, resp.StatusCode, body)
		}
	}
	for i := burst; i < 2*burst; i++ {
		resp, body := whoami("busy-key")
		mustErrorBody(t, resp, body, http.StatusTooManyRequests, "rate_limited")
		// The next token comes back after 1/rate seconds: an hour.
		if got := resp.Header.Get("Retry-After"); got != "3600" {
			t.Errorf("request %d: Retry-After %q, want 3600 (one request an hour)", i, got)
		}
	}
	if resp, body := whoami("calm-key"); resp.StatusCode != http.StatusOK {
		t.Errorf("another host key: %d %s", resp.StatusCode, body)
	}
	if resp, body := whoami("wrong-key"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unknown key: %d %s, want 401 before any rate", resp.StatusCode, body)
	} else {
		mustErrorBody(t, resp, body, http.StatusUnauthorized, "unauthenticated")
	}
}
