package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServe_ResourceLimits checks the limits an API needs against clients that hold it
// up: a client that sends its headers too slowly is cut off after
// server.read_header_timeout, and a request that outlives server.handler_timeout is
// answered 503 in the one error shape (the body limit and the rate limit have tests of
// their own in ./handlers).
func TestServe_ResourceLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	// Every request that reads Neo4j outlives a 1 ms handler timeout, /readyz too: this
	// memgate is never ready, so the test waits for it to be alive.
	srv := launch(t, map[string]string{"MEMGATE_SERVER_READ_HEADER_TIMEOUT": "1s",
		"MEMGATE_SERVER_HANDLER_TIMEOUT": "1ms", "MEMGATE_INGEST_WORKERS": "0"})
	defer srv.stop(t)
	base := srv.base
	waitStatus(t, base+"/healthz", http.StatusOK, 60*time.Second)

	t.Run("SlowHeaders", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: memgate\r\nX-Slow: ")); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		took := time.Since(start)
		switch {
		case err == nil && resp.StatusCode != http.StatusRequestTimeout:
			t.Fatalf("a client that never finished its headers got %d", resp.StatusCode)
		case err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
			t.Fatalf("waiting for the cut: %v after %v", err, took)
		case took > 5*time.Second:
			t.Fatalf("cut off after %v, with a 1 s header timeout", took)
		}
		t.Logf("a client sending its headers too slowly was cut off after %v", took.Round(time.Millisecond))
	})
	t.Run("HandlerTimeout", func(t *testing.T) {
		var body struct {
			Error struct{ Code, Message string }
		}
		c := apiClient{t: t, base: base, requester: "alice"}
		if status := c.call("POST", "/v1/agents", map[string]any{"id": "limits-" + suffix()}, &body); status != http.StatusServiceUnavailable || body.Error.Code != "unavailable" {
			t.Fatalf("a request past the handler timeout: %d %+v, want 503 unavailable", status, body)
		}
	})
}
