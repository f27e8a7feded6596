package neo4jstore

import (
	"strings"
	"sync"
)

// Waking idle runners. A runner with nothing to claim polls the queue (ingest.poll);
// an episode this process makes claimable in its scope wakes it instead (the runner
// claims after a random pause of at most 20 ms, extract's wakeSpread): a write queued
// through this replica starts extracting without waiting for the next poll, and the
// poll can be slow without slowing that write. What another replica queues is found
// at the next poll.
//
// The signal is the process's, not one store's: a runner may hold a store of its own
// (tests open one per part); a runner woken for another database claims once for
// nothing.
var claimable = signal{waiting: map[string]chan struct{}{}}

// queuing names the queries after whose commit an episode may be claimable: one
// queued (created, changed, moved back to the queue, handed back, or re-extracted as
// the context of an erased one), or the end of the one before it in its space
// (saved, failed for good, erased).
var queuing = map[string]bool{
	"episode_create": true, "episode_update": true, "episode_unlink": true, "episode_requeue_context_users": true,
	"episode_return": true, "episode_requeue": true, "team_dissolve": true, "graph_save": true, "episode_delete": true,
	"episode_release": true,
}

// queuedIn names the spaces a queuing query may have made an episode claimable in,
// from its parameters; nil for any space. An episode created or saved is in its own
// space (the group_id of each row of $episodes, or of $save.episodes), one unlinked,
// deleted or re-extracted in $group_id. The rest may touch spaces their parameters do
// not name (a move leaves the next episode of the space it left claimable; a
// dissolution moves memories to their agents' spaces), so they wake every runner.
func queuedIn(name string, params map[string]any) []string {
	switch name {
	case "episode_unlink", "episode_delete", "episode_requeue_context_users":
		if g, ok := params["group_id"].(string); ok {
			return []string{g}
		}
	case "graph_save":
		if save, ok := params["save"].(map[string]any); ok {
			return queuedIn("episode_create", save)
		}
	case "episode_create":
		var groups []string
		add := func(row map[string]any) bool {
			g, ok := row["group_id"].(string)
			groups = append(groups, g)
			return ok
		}
		switch rows := params["episodes"].(type) {
		case []any:
			for _, r := range rows {
				if row, ok := r.(map[string]any); !ok || !add(row) {
					return nil
				}
			}
			return groups
		case []map[string]any:
			for _, row := range rows {
				if !add(row) {
					return nil
				}
			}
			return groups
		}
	}
	return nil
}

// Queued returns a channel closed the next time this process commits a write that
// may have made an episode claimable (see queuing) in a space whose group_id starts
// with scope.
func (db *DB) Queued(scope string) <-chan struct{} {
	return claimable.wait(scope)
}

// signal wakes waiters by scope: wait's channel is closed by the next notify of a
// space in that scope.
type signal struct {
	mu      sync.Mutex
	waiting map[string]chan struct{} // by scope
}

func (s *signal) wait(scope string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.waiting[scope]
	if ch == nil {
		ch = make(chan struct{})
		s.waiting[scope] = ch
	}
	return ch
}

// notify wakes the waiters whose scope holds one of groups; nil groups wake them all.
func (s *signal) notify(groups []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for scope, ch := range s.waiting {
		if groups == nil || inScope(groups, scope) {
			close(ch)
			delete(s.waiting, scope)
		}
	}
}

func inScope(groups []string, scope string) bool {
	for _, g := range groups {
		if strings.HasPrefix(g, scope) {
			return true
		}
	}
	return false
}

// wakeup gathers what the queuing queries of one transaction may have made claimable,
// to wake those runners once it has committed. A transaction the driver retries adds
// its queries again, which wakes no one it should not.
type wakeup struct {
	mu     sync.Mutex
	queued bool     // a queuing query ran
	all    bool     // one of them may have touched any space
	groups []string // else the spaces they touched
}

func (w *wakeup) add(name string, params map[string]any) {
	if !queuing[name] {
		return
	}
	groups := queuedIn(name, params)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queued = true
	w.all = w.all || groups == nil
	w.groups = append(w.groups, groups...)
}

// notify wakes the runners of what the transaction queued; call it after the commit.
func (w *wakeup) notify() {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.all:
		claimable.notify(nil)
	case w.queued && len(w.groups) > 0:
		claimable.notify(w.groups)
	}
}
