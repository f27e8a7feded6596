package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestClient_CarriesTheConsistencyToken: the token a write answers goes with every
// later request of the client (until a newer write answers another), an error answer
// leaves it alone, and SetToken hands it to another client.
func TestClient_CarriesTheConsistencyToken(t *testing.T) {
	var mu sync.Mutex
	var sent []string // the token each request carried
	writes := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, r.Header.Get("X-Consistency-Token"))
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/memories":
			writes++
			if writes == 3 {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"down","request_id":"r"}}`))
				return
			}
			w.Header().Set("X-Consistency-Token", []string{"", "first", "second"}[writes])
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"id":"m","group_id":"g","status":"queued"}`))
		default:
			_, _ = w.Write([]byte(`{"id":"m","content":"x"}`))
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := New(srv.URL, "", "alice")
	if _, err := c.Get(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.Add(ctx, Memory{AgentID: "a", Messages: "x"}, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, "m"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Add(ctx, Memory{AgentID: "a", Messages: "x"}, ""); err == nil {
		t.Fatal("the third write was answered 503, the client said nil")
	}
	other := New(srv.URL, "", "bob")
	other.SetToken(c.Token())
	if _, err := other.Get(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	want := []string{"", "", "first", "first", "second", "second", "second"}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != len(want) || c.Token() != "second" {
		t.Fatalf("tokens sent %q, client's %q; want %q then second", sent, c.Token(), want)
	}
	for i := range want {
		if sent[i] != want[i] {
			t.Errorf("request %d carried %q, want %q (all: %q)", i, sent[i], want[i], sent)
		}
	}
}
