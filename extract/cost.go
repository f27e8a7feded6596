package extract

import (
	"context"
	"sync"

	"github.com/memgate/memgate/graph"
)

// meter adds up what the model provider calls made under one context cost: the
// pipeline gives each attempt at an episode its own (withMeter), and the OpenAI client
// adds every call it makes for that attempt, whichever part of the pipeline makes it
// (extraction, embeddings, entity and contradiction judgements). A call made under a
// context without a meter (a search's query embedding, a compaction) is counted by the
// process metrics alone.
type meter struct {
	mu   sync.Mutex
	cost graph.Cost
}

type meterKey struct{}

// withMeter returns ctx with a new meter, which the calls made under it add to.
func withMeter(ctx context.Context) (context.Context, *meter) {
	m := &meter{}
	return context.WithValue(ctx, meterKey{}, m), m
}

// meterOf is ctx's meter, or nil: a nil meter counts nothing.
func meterOf(ctx context.Context) *meter {
	m, _ := ctx.Value(meterKey{}).(*meter)
	return m
}

func (m *meter) add(c graph.Cost) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cost = m.cost.Add(c)
}

// total is what the calls cost so far (Seconds is the pipeline's to set).
func (m *meter) total() graph.Cost {
	if m == nil {
		return graph.Cost{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cost
}
