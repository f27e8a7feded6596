package batch

// Pending is how many calls wait for a group.
func (b *Batcher[Q, R]) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}
