package neo4jstore

import "sync"

// Waking idle runners. A runner with nothing to claim polls the queue (ingest.poll);
// an episode this process makes claimable wakes it instead (the runner claims after a
// random pause of at most 20 ms, extract's wakeSpread): a write queued through this
// replica starts extracting without waiting for the next poll, and the poll can be
// slow without slowing that write. What another replica queues is found at the next
// poll.
//
// The signal is the process's, not one store's: a runner may hold a store of its own
// (tests open one per part); a runner woken for another database claims once for
// nothing.
var claimable signal

// queuing names the queries after whose commit an episode may be claimable: one
// queued (created, changed, moved back to the queue, handed back, or re-extracted as
// the context of an erased one), or the end of the one before it in its space
// (saved, erased).
var queuing = map[string]bool{
	"episode_create": true, "episode_update": true, "episode_unlink": true, "episode_requeue_context_users": true,
	"episode_return": true, "episode_requeue": true, "team_dissolve": true, "graph_save": true, "episode_delete": true,
}

// Queued returns a channel closed the next time this process commits a write that
// may have made an episode claimable (see queuing).
func (db *DB) Queued() <-chan struct{} {
	return claimable.wait()
}

// signal is a broadcast: wait's channel is closed by the next notify.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}
