package handlers_test

import (
	"encoding/json"
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
// the one error shape, and another host key is not slowed by it.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	ring, err := access.NewKeyring([]access.KeySpec{
		{Name: "busy", SHA256: access.HashKey("busy-key"), Trusted: true},
		{Name: "calm", SHA256: access.HashKey("calm-key"), Trusted: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handlers.New(handlers.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Keys: ring,
		Service: &service.Service{}, BodyLimit: "1M", HandlerTimeout: time.Second, Version: "test", RateLimit: 0.5, RateBurst: 3}))
	defer srv.Close()
	whoami := func(key string) (*http.Response, []byte) {
		return do(t, "GET", srv.URL+"/v1/whoami", map[string]string{"Authorization": "Bearer " + key}, "")
	}
	limited := 0
	for i := 0; i < 6; i++ {
		resp, body := whoami("busy-key")
		switch resp.StatusCode {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			limited++
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != "rate_limited" || resp.Header.Get("Retry-After") != "2" {
				t.Errorf("429: %s, Retry-After %q", body, resp.Header.Get("Retry-After"))
			}
		default:
			t.Errorf("request %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if limited != 3 {
		t.Errorf("%d of 6 requests were limited, want the 3 beyond the burst", limited)
	}
	if resp, body := whoami("calm-key"); resp.StatusCode != http.StatusOK {
		t.Errorf("another host key: %d %s", resp.StatusCode, body)
	}
	if resp, _ := whoami("wrong-key"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unknown key: %d, want 401 before any rate", resp.StatusCode)
	}
}
