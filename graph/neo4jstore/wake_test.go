package neo4jstore

import (
	"slices"
	"testing"
)

// A write wakes the runners whose scope holds its space, and only those; a query
// whose spaces its parameters do not name wakes them all.
func TestWake_ByScope(t *testing.T) {
	s := signal{waiting: map[string]chan struct{}{}}
	woken := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	a, b, every := s.wait("agent-a-"), s.wait("agent-b-"), s.wait("")
	if s.wait("agent-a-") != a {
		t.Fatal("two waiters of one scope got different channels")
	}
	s.notify([]string{"agent-a-private"})
	if !woken(a) || !woken(every) || woken(b) {
		t.Fatalf("a write to agent-a-private woke a: %v, every scope: %v, b: %v; want true, true, false", woken(a), woken(every), woken(b))
	}
	s.notify(nil)
	if !woken(b) {
		t.Fatal("a write to any space did not wake b")
	}

	for _, c := range []struct {
		name   string
		params map[string]any
		want   []string
	}{
		{"episode_create", map[string]any{"episodes": []any{map[string]any{"group_id": "agent-a-public"},
			map[string]any{"group_id": "team-x"}}}, []string{"agent-a-public", "team-x"}},
		{"graph_save", map[string]any{"save": map[string]any{"episodes": []map[string]any{{"uuid": "u", "group_id": "agent-b-private"}}}}, []string{"agent-b-private"}},
		{"graph_save", map[string]any{"save": map[string]any{"episodes": []map[string]any{{"uuid": "u"}}}}, nil},
		{"episode_delete", map[string]any{"group_id": "agent-a-private", "uuid": "u"}, []string{"agent-a-private"}},
		{"episode_update", map[string]any{"group_id": "agent-a-public", "uuid": "u"}, nil}, // it may leave a space
		{"team_dissolve", map[string]any{"group_id": "team-x"}, nil},                       // its memories go to their agents' spaces
		{"episode_return", map[string]any{"uuid": "u"}, nil},
		{"episode_release", map[string]any{"uuid": "u", "retry_at": nil}, nil}, // failed for good: its space's next is due
	} {
		if !queuing[c.name] {
			t.Errorf("%s wakes no runner", c.name)
		}
		if got := queuedIn(c.name, c.params); !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%s %v: queued in %q, want %q", c.name, c.params, got, c.want)
		}
	}
}
