package extract_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// pipe is one test's pipeline: a real Neo4j, the scripted LLM, and spaces of its own.
type pipe struct {
	t      testing.TB
	db     *neo4jstore.DB
	llm    *llmtest.Server
	scope  string // every group_id of this test starts with it
	opts   extract.OpenAIOptions
	metric *extract.Metrics
	agents map[string]bool // created by agent
}

func newPipe(t testing.TB) *pipe {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test")
	}
	llm := llmtest.New()
	t.Cleanup(llm.Close)
	var b [4]byte
	_, _ = rand.Read(b[:])
	mark := hex.EncodeToString(b[:])
	neo4jtest.Forget(t, mark)
	m := &extract.Metrics{}
	return &pipe{t: t, db: neo4jtest.DB(t), llm: llm, scope: "agent-p" + mark, metric: m, agents: map[string]bool{},
		opts: extract.OpenAIOptions{BaseURL: llm.BaseURL(), APIKey: "test", Model: "scripted", Timeout: 2 * time.Second,
			MaxConcurrency: 4, MaxRetries: 2, RetryBase: 5 * time.Millisecond, Dimensions: neo4jtest.Dimensions,
			Metrics: m, Log: neo4jtest.Logger(t)}}
}

func (p *pipe) space(name string) string { return p.scope + name + "-private" }

func (p *pipe) runner(workers, maxAttempts int) *extract.Runner {
	llm := extract.NewOpenAI(p.opts, extract.DefaultEntityTypes)
	emb := p.opts
	emb.Model = "embedder"
	return &extract.Runner{
		Queue: p.db, Extractor: llm, Types: extract.DefaultEntityTypes,
		Resolver: &extract.Resolver{Know: p.db, Embedder: extract.NewOpenAI(emb, nil), Deduper: llm, Judge: llm, Now: time.Now},
		Workers:  workers, Lease: time.Minute, MaxAttempts: maxAttempts, Backoff: 20 * time.Millisecond,
		Poll: neo4jtest.RunnerPoll, Log: neo4jtest.Logger(p.t), Metrics: p.metric, Scope: p.scope,
	}
}

// start runs r until the test ends.
func (p *pipe) start(r *extract.Runner) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	p.t.Cleanup(func() { cancel(); <-done })
	return cancel
}

// add stores an episode as the API does: queued, in group, created now.
func (p *pipe) add(group, content string) *graph.Episode {
	return p.addAt(group, content, time.Now().UTC())
}

// addAt stores an episode with reference time at (and extraction_instructions, if
// any).
func (p *pipe) addAt(group, content string, at time.Time, instructions ...string) *graph.Episode {
	p.t.Helper()
	now := time.Now().UTC()
	space, _ := graph.ParseGroupID(group)
	p.agent(space.Agent)
	e := &graph.Episode{UUID: uuid.NewString(), GroupID: group, AgentID: space.Agent, Source: graph.SourceText,
		Content: content, CreatedAt: now, ValidAt: at, Status: graph.StatusQueued, Name: content,
		ExtractionInstructions: strings.Join(instructions, "\n")}
	if res := p.db.CreateEpisodes(context.Background(), []*graph.Episode{e})[0]; res.Err != nil {
		p.t.Fatal(res.Err)
	}
	time.Sleep(2 * time.Millisecond) // distinct created_at, so the order within a space is the order of adds
	return e
}

// agent creates the agent whose space an episode goes to, unless it exists: memgate
// stores nothing in the space of an agent that does not.
func (p *pipe) agent(id string) {
	p.t.Helper()
	if id == "" || p.agents[id] {
		return
	}
	err := p.db.CreateAgent(context.Background(), graph.DefaultOrg, &graph.Agent{ID: id, OwnerID: "owner-" + p.scope, CreatedAt: time.Now()}, nil)
	if err != nil && graph.ErrorCode(err) != graph.ECONFLICT {
		p.t.Fatal(err)
	}
	p.agents[id] = true
}

// writeSteadily stores episode(0), episode(1), ... every 5 ms (a steady stream, not a
// flood that slows the claims), as a client whose requests were authorized before an
// erasure would, until the returned stop is called; stop returns once the writer has.
// A write refused (the agent gone) is the point, not a failure.
func (p *pipe) writeSteadily(ctx context.Context, episode func(i int) *graph.Episode) (stop func()) {
	done, stored := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stored)
		pace := time.NewTicker(5 * time.Millisecond)
		defer pace.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-pace.C:
			}
			p.db.CreateEpisodes(ctx, []*graph.Episode{episode(i)})
		}
	}()
	return func() { close(done); <-stored }
}

// waitClaimed polls episode id (in groups) until it is no longer queued: claimed,
// being extracted or saved, or done.
func (p *pipe) waitClaimed(id string, groups []string) {
	p.t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		e, err := p.db.GetEpisode(context.Background(), id, graph.Visible{GroupIDs: groups})
		if err != nil {
			p.t.Fatal(err)
		}
		if e.Status != graph.StatusQueued {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("episode %s still queued a minute on", id)
		}
	}
}

// wait polls until every episode is done or failed, and returns them.
func (p *pipe) wait(eps []*graph.Episode, limit time.Duration) []*graph.Episode {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	// One cheap count while work is under way, so the polling does not compete with
	// the pipeline for the database; then each episode once.
	for {
		depth, err := p.db.QueueDepth(context.Background(), p.scope)
		if err != nil {
			p.t.Fatal(err)
		}
		if depth[graph.StatusQueued]+depth[graph.StatusProcessing] == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	out := make([]*graph.Episode, len(eps))
	for {
		pending := 0
		for i, e := range eps {
			if out[i] != nil && (out[i].Status == graph.StatusDone || out[i].Status == graph.StatusFailed) {
				continue // finished episodes stay finished until a test requeues them
			}
			got, err := p.db.GetEpisode(context.Background(), e.UUID, graph.Visible{GroupIDs: []string{e.GroupID}})
			if err != nil {
				p.t.Fatal(err)
			}
			out[i] = got
			if got.Status != graph.StatusDone && got.Status != graph.StatusFailed {
				pending++
				if pending == 5 {
					break // the rest are surely pending too; ask again later
				}
			}
		}
		if pending == 0 {
			return out
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%d of %d episodes still pending after %v", pending, len(eps), limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// graphOf reads a space's entities (by name) and facts.
func (p *pipe) graphOf(group string, names ...string) (map[string]*graph.EntityNode, []*graph.Fact) {
	p.t.Helper()
	ctx := context.Background()
	near, err := p.db.Neighbourhoods(ctx, []graph.NeighbourhoodQuery{{GroupID: group, Names: names}}, 100)
	if err != nil {
		p.t.Fatal(err)
	}
	ents, facts := near[0].Entities, near[0].Facts
	byName := map[string]*graph.EntityNode{}
	for _, e := range ents {
		if e.GroupID != group {
			p.t.Fatalf("entity %s of %s read from %s", e.Name, e.GroupID, group)
		}
		if byName[e.Name] != nil {
			p.t.Fatalf("entity %s twice in %s", e.Name, group)
		}
		byName[e.Name] = e
	}
	return byName, facts
}

func date(s string) *time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return &t
}

var (
	aliceAcme = map[string]any{
		"entities": []map[string]any{
			{"name": "Alice", "type": "Person", "summary": "An engineer."},
			{"name": "Acme", "type": "Organization", "summary": "Alice's employer."},
		},
		"facts": []map[string]any{
			{"source": "Alice", "target": "Acme", "relation": "WORKS_AT", "fact": "Alice works at Acme as an engineer.",
				"valid_at": nil, "invalid_at": nil},
		},
	}
	aliceGlobex = map[string]any{
		"entities": []map[string]any{
			{"name": "Alice", "type": "Person", "summary": "Left Acme for Globex in March 2024."},
			{"name": "ACME", "type": "Organization", "summary": "Alice left Acme in March 2024."},
			{"name": "Globex", "type": "Organization", "summary": "Alice joined Globex in March 2024."},
		},
		"facts": []map[string]any{
			{"source": "Alice", "target": "ACME", "relation": "works at", "fact": "Alice worked at Acme until March 2024.",
				"valid_at": nil, "invalid_at": "2024-03-01"},
			{"source": "Alice", "target": "Globex", "relation": "WORKS_AT", "fact": "Alice works at Globex since March 2024.",
				"valid_at": "2024-03-01T00:00:00Z", "invalid_at": nil},
		},
	}
)

// TestPipeline_AliceAcmeGlobex is the scenario of the ingestion issue, through the
// OpenAI path against the scripted server, on a real Neo4j.
func TestPipeline_AliceAcmeGlobex(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	p.llm.Answer("Alice works at Acme", aliceAcme)
	p.llm.Answer("Alice left Acme and joined Globex", aliceGlobex)
	a, b := p.space("a"), p.space("b")
	eps := []*graph.Episode{
		p.add(a, "Alice works at Acme as an engineer."),
		p.add(b, "Alice works at Acme as an engineer."),
		p.add(a, "In March 2024 Alice left Acme and joined Globex."),
		p.add(b, "In March 2024 Alice left Acme and joined Globex."),
	}
	p.start(p.runner(4, 3))
	for _, e := range p.wait(eps, 60*time.Second) {
		if e.Status != graph.StatusDone {
			t.Fatalf("episode %s: %s (%s)", e.UUID, e.Status, e.LastError)
		}
	}

	seen := map[string]string{}
	for gi, group := range []string{a, b} {
		ents, facts := p.graphOf(group, "Alice", "Acme", "Globex")
		if len(ents) != 3 || ents["Alice"] == nil || ents["Acme"] == nil || ents["Globex"] == nil {
			t.Fatalf("%s: entities %v, want Alice, Acme, Globex once each", group, keys(ents))
		}
		if ents["Alice"].Type != "Person" || ents["Globex"].Type != "Organization" {
			t.Errorf("%s: types %q %q", group, ents["Alice"].Type, ents["Globex"].Type)
		}
		// What the episodes said of her, newest first, then the facts about her that
		// hold now: the ended Acme one is gone.
		if want := "Left Acme for Globex in March 2024. An engineer. Alice works at Globex since March 2024."; ents["Alice"].Summary != want {
			t.Errorf("%s: Alice's summary %q, want %q", group, ents["Alice"].Summary, want)
		}
		if want := "Alice joined Globex in March 2024. Alice works at Globex since March 2024."; ents["Globex"].Summary != want {
			t.Errorf("%s: Globex's summary %q, want %q", group, ents["Globex"].Summary, want)
		}
		for name, e := range ents {
			if other, ok := seen[e.UUID]; ok {
				t.Fatalf("entity %s of %s is also %s's: spaces share a node", name, group, other)
			}
			seen[e.UUID] = group
		}
		if len(facts) != 2 {
			t.Fatalf("%s: %d facts, want 2: %+v", group, len(facts), facts)
		}
		// reference_time (Graphiti reads it): the reference time of the episode that
		// first stated the fact.
		stated := map[string]time.Time{ents["Acme"].UUID: eps[gi].ValidAt, ents["Globex"].UUID: eps[gi+2].ValidAt}
		for _, f := range facts {
			if f.Name != "WORKS_AT" || f.SourceUUID != ents["Alice"].UUID || f.GroupID != group {
				t.Fatalf("%s: fact %+v", group, f)
			}
			if want := stated[f.TargetUUID]; !f.ReferenceTime.Equal(want) {
				t.Errorf("%s: fact %s has reference_time %v, want %v", group, f.Fact, f.ReferenceTime, want)
			}
			switch f.TargetUUID {
			case ents["Acme"].UUID:
				if f.InvalidAt == nil || !f.InvalidAt.Equal(*date("2024-03-01")) || f.ExpiredAt == nil {
					t.Errorf("%s: the Acme fact has invalid_at %v, expired_at %v; want 2024-03 and set", group, f.InvalidAt, f.ExpiredAt)
				}
				if len(f.Episodes) != 2 {
					t.Errorf("%s: the Acme fact is supported by %v, want both episodes", group, f.Episodes)
				}
			case ents["Globex"].UUID:
				if f.InvalidAt != nil || f.ExpiredAt != nil || f.ValidAt == nil || !f.ValidAt.Equal(*date("2024-03-01")) {
					t.Errorf("%s: the Globex fact is %v..%v expired %v; want current from 2024-03", group, f.ValidAt, f.InvalidAt, f.ExpiredAt)
				}
				if len(f.FactEmbedding) != neo4jtest.Dimensions {
					t.Errorf("%s: fact embedding of %d dimensions", group, len(f.FactEmbedding))
				}
			default:
				t.Errorf("%s: a fact to an unknown entity: %+v", group, f)
			}
		}
	}
	if calls := p.llm.ChatCalls.Load(); calls != 4 {
		t.Errorf("%d chat calls for 4 episodes, want 4", calls)
	}
	// The second episode of a space is extracted with the first as context.
	withContext := 0
	for _, prompt := range p.llm.Prompts() {
		current := prompt[strings.Index(prompt, "<current_episode>"):]
		if strings.Contains(current, "joined Globex") &&
			strings.Contains(prompt, "<episode reference_time=") && strings.Contains(prompt, "Alice works at Acme as an engineer.") {
			withContext++
		}
	}
	if withContext != 2 {
		t.Errorf("%d of the 2 later episodes were extracted with the earlier one as context", withContext)
	}
	if calls := p.llm.EmbeddingCalls.Load(); calls != 4 {
		t.Errorf("%d embedding calls for 4 episodes, want 4 (one batch each)", calls)
	}

	t.Run("DeleteCascade", func(t *testing.T) {
		// Deleting the second episode of space a removes the Globex fact and Globex,
		// which only it supported, and leaves the Acme fact with the first episode.
		err := p.db.DeleteEpisode(context.Background(), eps[2].UUID, graph.Visible{GroupIDs: []string{a}},
			func(*graph.Episode) (*graph.AuditEvent, error) { return nil, nil })
		if err != nil {
			t.Fatal(err)
		}
		ents, facts := p.graphOf(a, "Alice", "Acme", "Globex")
		if len(ents) != 2 || ents["Globex"] != nil {
			t.Fatalf("entities after the delete: %v, want Alice and Acme", keys(ents))
		}
		if len(facts) != 1 || facts[0].TargetUUID != ents["Acme"].UUID || len(facts[0].Episodes) != 1 || facts[0].Episodes[0] != eps[0].UUID {
			t.Fatalf("facts after the delete: %+v, want the Acme fact with the first episode only", facts)
		}
		if ents, facts := p.graphOf(b, "Alice", "Acme", "Globex"); len(ents) != 3 || len(facts) != 2 {
			t.Fatalf("space b changed: %d entities, %d facts", len(ents), len(facts))
		}
	})
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestPipeline_Faults runs episodes with the LLM failing 10%, 50% and 100% of calls:
// every episode ends done or failed with a reason; after recovery, retrying brings
// the failed ones to done, with no duplicate facts.
func TestPipeline_Faults(t *testing.T) {
	t.Parallel()
	for _, rate := range []float64{0.1, 0.5, 1.0} {
		t.Run(fmt.Sprintf("%.0f%%", rate*100), func(t *testing.T) {
			p := newPipe(t)
			p.opts.Timeout = 300 * time.Millisecond
			p.opts.MaxRetries = 1
			p.llm.HangFor(time.Second)
			const n = 12
			var eps []*graph.Episode
			for i := 0; i < n; i++ {
				text := p.llm.Knows(fmt.Sprintf("Person%d", i), fmt.Sprintf("Friend%d", i))
				eps = append(eps, p.add(p.space(fmt.Sprint(i%3)), text))
			}
			p.llm.Fail(rate, llmtest.Fault429, llmtest.Fault500, llmtest.FaultMalformed, llmtest.FaultEmpty, llmtest.FaultTimeout)
			cancel := p.start(p.runner(4, 2))
			got := p.wait(eps, 90*time.Second)
			failed := 0
			for _, e := range got {
				if e.Status == graph.StatusFailed {
					failed++
					if !slices.Contains(extract.Reasons(), e.LastError) {
						t.Errorf("episode %s failed with %q, want one of the stable reasons %q (the provider's text stays in the log)",
							e.UUID, e.LastError, extract.Reasons())
					}
				}
			}
			if rate == 1.0 && failed != n {
				t.Errorf("with every call failing, %d of %d failed", failed, n)
			}
			t.Logf("failing %.0f%% of calls: %d of %d episodes failed after retries", rate*100, failed, n)

			// The LLM recovers; the failed are retried through the queue.
			p.llm.Fail(0)
			for _, e := range got {
				if e.Status == graph.StatusFailed {
					if _, err := p.db.Requeue(context.Background(), e.UUID, graph.Visible{GroupIDs: []string{e.GroupID}}); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, e := range p.wait(eps, 60*time.Second) {
				if e.Status != graph.StatusDone {
					t.Fatalf("after recovery %s is %s: %s", e.UUID, e.Status, e.LastError)
				}
			}
			cancel()
			for i := 0; i < 3; i++ {
				var names []string
				for j := i; j < n; j += 3 {
					names = append(names, fmt.Sprintf("Person%d", j), fmt.Sprintf("Friend%d", j))
				}
				ents, facts := p.graphOf(p.space(fmt.Sprint(i)), names...)
				if len(ents) != len(names) || len(facts) != len(names)/2 {
					t.Errorf("space %d: %d entities and %d facts, want %d and %d (no duplicates)", i, len(ents), len(facts), len(names), len(names)/2)
				}
			}
		})
	}
}

// TestPipeline_Contradictions has the LLM judge, in one call per episode, the stored
// facts a new fact may contradict (same source, same relation or a similar text):
// Bob's move to Berlin ends Paris; tennis does not end chess; a fact about an earlier
// time (Rome in 2010) is the one that ends; a fact with nothing similar stored costs
// no call.
func TestPipeline_Contradictions(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	entity := func(name, typ string) map[string]any { return map[string]any{"name": name, "type": typ, "summary": ""} }
	fact := func(target, relation, text string, validAt any) map[string]any {
		return map[string]any{"source": "Bob", "target": target, "relation": relation, "fact": text, "valid_at": validAt, "invalid_at": nil}
	}
	scene := []struct {
		episode, target, typ, relation, fact string
		validAt                              any
		at                                   string
	}{
		{"Bob has a flat in Paris and plays chess.", "Paris", "Location", "LIVES_IN", "Bob lives in Paris.", nil, "2024-01-10"},
		{"In June 2025 Bob moved to Berlin.", "Berlin", "Location", "LIVES_IN", "Bob lives in Berlin.", "2025-06-01", "2025-07-01"},
		{"Bob took up tennis.", "Tennis", "Concept", "PLAYS", "Bob plays tennis.", nil, "2025-08-01"},
		{"Back in 2010 Bob had a flat in Rome.", "Rome", "Location", "LIVES_IN", "Bob lived in Rome.", "2010-01-01", "2025-09-01"},
		{"Bob met Carol at a conference.", "Carol", "Person", "KNOWS", "Bob knows Carol.", nil, "2025-10-01"},
	}
	// The judge's answers are keyed by the new fact, listed first in each pair.
	p.llm.Answer("new: Bob lives in Berlin.", map[string]any{"pair_1": true})
	p.llm.Answer("new: Bob plays tennis.", map[string]any{"pair_1": false})
	p.llm.Answer("new: Bob lived in Rome.", map[string]any{"pair_1": true})
	group := p.space("a")
	var eps []*graph.Episode
	for i, s := range scene {
		x := map[string]any{
			"entities": []map[string]any{entity("Bob", "Person"), entity(s.target, s.typ)},
			"facts":    []map[string]any{fact(s.target, s.relation, s.fact, s.validAt)},
		}
		if i == 0 {
			x["entities"] = append(x["entities"].([]map[string]any), entity("Chess", "Concept"))
			x["facts"] = append(x["facts"].([]map[string]any), fact("Chess", "PLAYS", "Bob plays chess.", nil))
		}
		p.llm.Answer(s.episode, x)
		eps = append(eps, p.addAt(group, s.episode, *date(s.at)))
	}
	p.start(p.runner(2, 2))
	for _, e := range p.wait(eps, 60*time.Second) {
		if e.Status != graph.StatusDone {
			t.Fatalf("%s: %s (%s)", e.UUID, e.Status, e.LastError)
		}
	}
	ents, facts := p.graphOf(group, "Bob", "Paris", "Berlin", "Rome", "Chess", "Tennis", "Carol")
	byTarget := map[string]*graph.Fact{}
	for _, f := range facts {
		for name, e := range ents {
			if e.UUID == f.TargetUUID {
				byTarget[name] = f
			}
		}
	}
	day := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Format("2006-01-02")
	}
	for target, want := range map[string]struct{ valid, invalid string }{
		"Paris":  {"2024-01-10", "2025-06-01"}, // ended by the move
		"Berlin": {"2025-06-01", "-"},
		"Rome":   {"2010-01-01", "2025-06-01"}, // about an earlier time: it is the one that ends
		"Chess":  {"2024-01-10", "-"},          // tennis is another pastime
		"Tennis": {"2025-08-01", "-"},
		"Carol":  {"2025-10-01", "-"},
	} {
		f := byTarget[target]
		if f == nil {
			t.Errorf("no fact to %s", target)
			continue
		}
		if day(f.ValidAt) != want.valid || day(f.InvalidAt) != want.invalid || (f.InvalidAt != nil) != (f.ExpiredAt != nil) {
			t.Errorf("Bob -> %s: valid %s, invalid %s, expired %v; want %s .. %s", target, day(f.ValidAt), day(f.InvalidAt),
				f.ExpiredAt, want.valid, want.invalid)
		}
	}
	judged := 0
	for _, prompt := range p.llm.Prompts() {
		if strings.Contains(prompt, "<pairs>") {
			judged++
			if strings.Contains(prompt, "Carol") || strings.Contains(prompt, "known: Bob lives in Paris") && strings.Contains(prompt, "Rome") {
				t.Errorf("a pair that should not be asked about: %s", prompt)
			}
		}
	}
	if calls := p.llm.ChatCalls.Load(); calls != 8 || judged != 3 {
		t.Errorf("%d chat calls, %d of them judging; want 8: five extractions and three judgements (Carol needs none)", calls, judged)
	}
}

func TestExclusiveRelations(t *testing.T) {
	stored := &graph.Fact{Name: "LIVES_IN", SourceUUID: "bob", TargetUUID: "paris"}
	for _, c := range []struct {
		new  graph.Fact
		want bool
	}{
		{graph.Fact{Name: "LIVES_IN", SourceUUID: "bob", TargetUUID: "berlin"}, true},
		{graph.Fact{Name: "LIVES_IN", SourceUUID: "bob", TargetUUID: "paris"}, false},
		{graph.Fact{Name: "VISITED", SourceUUID: "bob", TargetUUID: "berlin"}, false},
	} {
		got, err := extract.Exclusive.Contradicts(context.Background(), []extract.FactPair{{New: &c.new, Stored: stored}})
		if err != nil || got[0] != c.want {
			t.Errorf("%s -> %s: %v %v, want %v", c.new.Name, c.new.TargetUUID, got, err, c.want)
		}
	}
	knows := &graph.Fact{Name: "KNOWS", SourceUUID: "bob", TargetUUID: "ann"}
	if got, _ := extract.Exclusive.Contradicts(context.Background(), []extract.FactPair{{New: &graph.Fact{Name: "KNOWS",
		SourceUUID: "bob", TargetUUID: "carol"}, Stored: knows}}); got[0] {
		t.Error("KNOWS Carol judged to contradict KNOWS Ann")
	}
}

// TestPipeline_BadOutput feeds the pipeline output no model should produce.
func TestPipeline_BadOutput(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	huge := strings.Repeat("Eve wrote. ", 10_000) // what the memory says, over and over
	p.llm.Answer("bad output episode", map[string]any{
		"entities": []map[string]any{
			{"name": "Eve\u0000 \n Evil", "type": "Person`) DETACH DELETE n //", "summary": huge},
			{"name": "'}) MATCH (n) DETACH DELETE n //", "type": "Organization", "summary": ""},
		},
		"facts": []map[string]any{
			{"source": "Eve Evil", "target": "Nobody", "relation": "KNOWS", "fact": "x", "valid_at": nil, "invalid_at": nil},
			{"source": "Eve Evil", "target": "'}) MATCH (n) DETACH DELETE n //", "relation": "X]->(m) DELETE m",
				"fact": huge, "valid_at": "not a date", "invalid_at": nil},
		},
	})
	p.llm.AnswerRaw("wrong types episode", `{"entities": "none", "facts": 7}`)
	good := p.add(p.space("a"), "bad output episode: Eve Evil wrote '}) MATCH (n) DETACH DELETE n //")
	wrong := p.add(p.space("b"), "wrong types episode")
	p.start(p.runner(2, 2))
	got := p.wait([]*graph.Episode{good, wrong}, 60*time.Second)
	if got[0].Status != graph.StatusDone {
		t.Fatalf("bad output: %s (%s), want done with the output cleaned", got[0].Status, got[0].LastError)
	}
	if got[1].Status != graph.StatusFailed || !strings.Contains(got[1].LastError, "malformed") {
		t.Fatalf("wrong types: %s (%q), want failed as malformed", got[1].Status, got[1].LastError)
	}
	ents, facts := p.graphOf(p.space("a"), "Eve Evil", "'}) MATCH (n) DETACH DELETE n //")
	eve := ents["Eve Evil"]
	if len(ents) != 2 || eve == nil {
		t.Fatalf("entities %v, want the two names, cleaned", keys(ents))
	}
	if eve.Type != "" || len([]rune(eve.Summary)) != 250 {
		t.Errorf("Eve: type %q, summary of %d runes; want no label from an unknown type and 250 runes (the description's half)", eve.Type, len([]rune(eve.Summary)))
	}
	if len(facts) != 0 {
		t.Errorf("facts %+v, want none: one names an unknown entity, one has a relation with syntax in it", facts)
	}
	for _, reason := range []string{"fact/unknown_entity", "fact/bad_relation"} {
		if n, ok := p.metric.Drops.Load(reason); !ok || n.(*atomic.Int64).Load() != 1 {
			t.Errorf("%s dropped %v times, want counted once", reason, n)
		}
	}
}

// TestPipeline_TwoRunners shares one queue between two runners (two processes in
// production): every episode is extracted exactly once.
func TestPipeline_TwoRunners(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	p.llm.Latency(20 * time.Millisecond)
	var eps []*graph.Episode
	for i := 0; i < 30; i++ {
		eps = append(eps, p.add(p.space(fmt.Sprint(i%5)), fmt.Sprintf("note number %d", i)))
	}
	p.start(p.runner(3, 3))
	p.start(p.runner(3, 3))
	for _, e := range p.wait(eps, 60*time.Second) {
		if e.Status != graph.StatusDone || e.Attempts != 1 {
			t.Fatalf("%s: %s after %d attempts", e.UUID, e.Status, e.Attempts)
		}
	}
	if calls := p.llm.ChatCalls.Load(); calls != int64(len(eps)) {
		t.Fatalf("%d extractions for %d episodes: some were processed twice", calls, len(eps))
	}
}

// TestPipeline_WokenByWrites: a runner that polls only once an hour still extracts,
// without waiting for its poll, what its process makes claimable (graph.Queue.Queued):
// the next episode of a space when the one before it is saved, and an episode queued
// while it is idle; and it retries a failed attempt once its backoff has passed.
func TestPipeline_WokenByWrites(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	p.opts.MaxRetries = 0
	r := p.runner(2, 3)
	r.Poll, r.Backoff = time.Hour, time.Second
	p.start(r)
	// The second is claimable only once the first is saved.
	inOrder := []*graph.Episode{p.add(p.space("a"), "note one"), p.add(p.space("a"), "note two")}
	for _, e := range p.wait(inOrder, 20*time.Second) {
		if e.Status != graph.StatusDone {
			t.Fatalf("%s: %s", e.Content, e.Status)
		}
	}
	// The runner has found the queue empty and waits for its hour.
	later := p.add(p.space("b"), "note three")
	if e := p.wait([]*graph.Episode{later}, 20*time.Second)[0]; e.Status != graph.StatusDone {
		t.Fatalf("%s: %s", e.Content, e.Status)
	}
	// The first attempt fails (its embedding call answers 500); the release wakes the
	// runner before the retry is due, and the retry comes a second later, not an hour.
	p.llm.FailEmbeddings(1)
	retried := p.add(p.space("c"), p.llm.Knows("Ada Quill", "Ben Ostrow"))
	if e := p.wait([]*graph.Episode{retried}, 20*time.Second)[0]; e.Status != graph.StatusDone || e.Attempts != 2 {
		t.Fatalf("%s: %s after %d attempts (%s), want done after 2", e.Content, e.Status, e.Attempts, e.LastError)
	}
}

// TestPipeline_AmbiguousNames sends names that are close but not the same to one
// batched LLM call: "Robert J. Smith" is judged the stored "Robert Smith", "Robert
// Smithson" is not and becomes an entity of its own.
func TestPipeline_AmbiguousNames(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	// First: the question quotes the stored entity's summary, which holds its facts.
	p.llm.Answer(`"Robert J. Smith" / "Robert Smith"`, map[string]any{"pair_1": true, "pair_2": false})
	group := p.space("a")
	p.robertSmiths(t, group)
	ents, facts := p.graphOf(group, "Robert Smith", "Robert J. Smith", "Robert Smithson", "Oslo", "Bergen")
	if len(ents) != 4 || ents["Robert Smith"] == nil || ents["Robert Smithson"] == nil || ents["Robert J. Smith"] != nil {
		t.Fatalf("entities %v, want Robert Smith (with the second name merged in), Robert Smithson, Oslo, Bergen", keys(ents))
	}
	if aliases := ents["Robert Smith"].Aliases; len(aliases) != 1 || aliases[0] != "Robert J. Smith" {
		t.Errorf("Robert Smith's aliases %v, want the merged name", aliases)
	}
	for _, f := range facts {
		if (f.Name == "KNOWS" || f.Name == "VISITED") && f.SourceUUID != ents["Robert Smith"].UUID {
			t.Errorf("%s starts at %s, want Robert Smith", f.Name, f.SourceUUID)
		}
	}
	if calls := p.llm.ChatCalls.Load(); calls != 4 {
		t.Errorf("%d chat calls, want 4: three extractions and one batched decision", calls)
	}
}

// robertSmiths stores, in group, three memories naming "Robert Smith", then "Robert J.
// Smith" and "Robert Smithson" (both close to the first), then "Robert J. Smith" again,
// each with its scripted extraction, and waits until all three are done.
func (p *pipe) robertSmiths(t *testing.T, group string) {
	t.Helper()
	person := func(name string) map[string]any { return map[string]any{"name": name, "type": "Person", "summary": ""} }
	p.llm.Answer("Robert Smith lives in Oslo", map[string]any{
		"entities": []map[string]any{person("Robert Smith"), {"name": "Oslo", "type": "Location", "summary": ""}},
		"facts": []map[string]any{{"source": "Robert Smith", "target": "Oslo", "relation": "LIVES_IN",
			"fact": "Robert Smith lives in Oslo.", "valid_at": nil, "invalid_at": nil}},
	})
	p.llm.Answer("Robert J. Smith met Robert Smithson", map[string]any{
		"entities": []map[string]any{person("Robert J. Smith"), person("Robert Smithson")},
		"facts": []map[string]any{{"source": "Robert J. Smith", "target": "Robert Smithson", "relation": "KNOWS",
			"fact": "Robert J. Smith met Robert Smithson.", "valid_at": nil, "invalid_at": nil}},
	})
	p.llm.Answer("Robert J. Smith visited Bergen", map[string]any{
		"entities": []map[string]any{person("Robert J. Smith"), {"name": "Bergen", "type": "Location", "summary": ""}},
		"facts": []map[string]any{{"source": "Robert J. Smith", "target": "Bergen", "relation": "VISITED",
			"fact": "Robert J. Smith visited Bergen.", "valid_at": nil, "invalid_at": nil}},
	})
	eps := []*graph.Episode{p.add(group, "Robert Smith lives in Oslo."), p.add(group, "Robert J. Smith met Robert Smithson."),
		p.add(group, "Robert J. Smith visited Bergen.")}
	p.start(p.runner(2, 2))
	for _, e := range p.wait(eps, 60*time.Second) {
		if e.Status != graph.StatusDone {
			t.Fatalf("%s: %s (%s)", e.UUID, e.Status, e.LastError)
		}
	}
}

// TestPipeline_UnansweredPairsKeepNamesApart answers the question about two
// ambiguous names for one of them only, every time it is asked: after its retries the
// names stay entities of their own, as without a model, and the memories are done,
// not extracted again.
func TestPipeline_UnansweredPairsKeepNamesApart(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	p.llm.Answer(`"Robert J. Smith" / "Robert Smith"`, map[string]any{"pair_1": true})
	group := p.space("a")
	p.robertSmiths(t, group)
	ents, _ := p.graphOf(group, "Robert Smith", "Robert J. Smith", "Robert Smithson", "Oslo", "Bergen")
	if len(ents) != 5 {
		t.Fatalf("entities %v, want all five names apart", keys(ents))
	}
	// Three extractions, the question and its two retries: no memory extracted twice.
	if calls := p.llm.ChatCalls.Load(); calls != 6 {
		t.Errorf("%d chat calls, want 6: three extractions and the question asked three times", calls)
	}
}

// TestPipeline_EraseRacesExtraction erases an agent while its memories are being
// extracted and more are being stored (security finding 1), eraseRounds times over one
// agent id that a new owner re-creates each round. Nothing of an erased agent may be
// left in Neo4j: no episode, entity, mention or fact in either of its spaces, or the
// next agent of that id would read it.
func TestPipeline_EraseRacesExtraction(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	p.llm.Latency(2 * time.Millisecond)
	p.start(p.runner(4, 3))
	ctx := context.Background()
	id := strings.TrimPrefix(p.scope, "agent-") + "r1"
	groups := []string{graph.DefaultOrg.Private(id).GroupID(), graph.DefaultOrg.Public(id).GroupID()}
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = p.llm.Knows(fmt.Sprintf("Person%d", i), fmt.Sprintf("Person%d", i+1))
	}
	const leftovers = `MATCH (n) WHERE n.group_id IN $groups
		RETURN count(n) + COUNT { MATCH ()-[r]->() WHERE r.group_id IN $groups }`
	for round := 0; round < eraseRounds; round++ {
		owner := fmt.Sprintf("owner%d-%s", round, p.scope)
		if err := p.db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: id, OwnerID: owner, CreatedAt: time.Now().UTC()}, nil); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var eps []*graph.Episode
		for _, text := range texts {
			eps = append(eps, p.add(groups[round%2], text))
		}
		// A writer keeps storing memories in the agent's space while it is erased, as
		// a client whose request was authorized just before the erasure would.
		stopWriting := p.writeSteadily(ctx, func(i int) *graph.Episode {
			return &graph.Episode{UUID: uuid.NewString(), GroupID: groups[round%2], AgentID: id, Source: graph.SourceText,
				Content: texts[i%len(texts)], CreatedAt: time.Now().UTC(), ValidAt: time.Now().UTC(), Status: graph.StatusQueued}
		})
		// Erase once the round's k-th memory is being extracted or saved, k moving on
		// each round so the erasure meets the pipeline at different points.
		p.waitClaimed(eps[round%3].UUID, groups)
		if _, err := p.db.DeleteAgent(ctx, graph.DefaultOrg, id, owner, nil); err != nil {
			t.Fatalf("round %d: erase: %v", round, err)
		}
		stopWriting()
		p.wait(nil, time.Minute) // the queue of this test's spaces is empty
		if n := neo4jtest.Count(t, leftovers, map[string]any{"groups": groups}); n != 0 {
			t.Fatalf("round %d: %d nodes and relationships of erased agent %s are left in Neo4j", round, n, id)
		}
	}
}

// TestPipeline_RequesterErasureRacesExtraction erases a requester while the memories
// of its shared space are being extracted and its agent keeps storing more there,
// eraseRounds times over one requester and agent id, created again each round.
// Nothing may be left of its spaces: an extraction saved later finds its episode
// gone, and a write later finds its agent gone.
func TestPipeline_RequesterErasureRacesExtraction(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	p.llm.Latency(2 * time.Millisecond)
	mark := strings.TrimPrefix(p.scope, "agent-p")
	owner, agent := "o"+mark, "p"+mark+"e1"
	shared := graph.DefaultOrg.Shared(owner).GroupID()
	r := p.runner(4, 3)
	r.Scope = shared
	p.start(r)
	ctx := context.Background()
	groups := []string{shared, graph.DefaultOrg.Private(agent).GroupID(), graph.DefaultOrg.Public(agent).GroupID()}
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = p.llm.Knows(fmt.Sprintf("Person%d", i), fmt.Sprintf("Person%d", i+1))
	}
	episode := func(i int) *graph.Episode {
		return &graph.Episode{UUID: uuid.NewString(), GroupID: shared, AgentID: agent, Source: graph.SourceText,
			Content: texts[i%len(texts)], CreatedAt: time.Now().UTC(), ValidAt: time.Now().UTC(), Status: graph.StatusQueued}
	}
	const leftovers = `MATCH (n) WHERE n.group_id IN $groups
		RETURN count(n) + COUNT { MATCH ()-[r]->() WHERE r.group_id IN $groups }`
	for round := 0; round < eraseRounds; round++ {
		if err := p.db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: agent, OwnerID: owner, CreatedAt: time.Now().UTC()}, nil); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var eps []*graph.Episode
		for i := range texts {
			e := episode(i)
			if res := p.db.CreateEpisodes(ctx, []*graph.Episode{e})[0]; res.Err != nil {
				t.Fatal(res.Err)
			}
			eps = append(eps, e)
		}
		// The agent keeps writing to its owner's shared space while the owner is
		// erased, as a request authorized just before would.
		stopWriting := p.writeSteadily(ctx, episode)
		p.waitClaimed(eps[round%3].UUID, groups) // erase once the k-th memory is being extracted or saved
		e, err := p.db.EraseRequester(ctx, graph.DefaultOrg, owner, fmt.Sprintf("erased-%s%08d", mark, round), false,
			func(graph.Erasure) *graph.AuditEvent { return nil })
		if err != nil {
			t.Fatalf("round %d: erase: %v", round, err)
		}
		if e.Agents != 1 || e.Memories < len(texts) {
			t.Fatalf("round %d: erased %+v, want the agent and at least the %d memories stored first", round, e, len(texts))
		}
		stopWriting()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			depth, err := p.db.QueueDepth(ctx, shared)
			if err != nil {
				t.Fatal(err)
			}
			if depth[graph.StatusQueued]+depth[graph.StatusProcessing] == 0 || time.Now().After(deadline) {
				break
			}
		}
		if n := neo4jtest.Count(t, leftovers, map[string]any{"groups": groups}); n != 0 {
			t.Fatalf("round %d: %d nodes and relationships of erased requester %s are left in Neo4j", round, n, owner)
		}
	}
}

// TestStructuredOutput_Modes: against a server that serves only one structured-output
// mode, that mode configured gets every episode done; every chat call asks for at
// most max_tokens, and json_object carries its schema as llama-cpp-python reads it.
func TestStructuredOutput_Modes(t *testing.T) {
	t.Parallel()
	for _, mode := range extract.OutputModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			p := newPipe(t)
			p.llm.Accepts(mode)
			p.llm.Answer("Alice works at Acme", aliceAcme)
			p.opts.StructuredOutput, p.opts.MaxTokens = mode, 900
			group := p.space("a")
			ep := p.add(group, "Alice works at Acme as an engineer.")
			p.start(p.runner(1, 1))
			if e := p.wait([]*graph.Episode{ep}, 30*time.Second)[0]; e.Status != graph.StatusDone {
				t.Fatalf("%s: %s", e.Status, e.LastError)
			}
			if ents, facts := p.graphOf(group, "Alice", "Acme"); len(ents) != 2 || len(facts) != 1 {
				t.Fatalf("entities %v, %d facts; want Alice, Acme and WORKS_AT", keys(ents), len(facts))
			}
			for _, r := range p.llm.Requests() {
				if r.Mode != mode || r.MaxTokens <= 0 || r.MaxTokens > 900 || (mode != extract.OutputPrompt && !r.Schema) {
					t.Errorf("request %+v, want mode %s with a schema and max_tokens at most 900", r, mode)
				}
			}
		})
	}
}

// TestStructuredOutput_AutoFallsBack: auto starts with json_schema; a server that
// refuses it (llama-cpp-python's 500, a tools-only server's 400) moves the process to
// the next mode once, with one warning per step, and every episode is done.
func TestStructuredOutput_AutoFallsBack(t *testing.T) {
	t.Parallel()
	for serves, steps := range map[string]int{extract.OutputJSONObject: 1, extract.OutputTools: 2} {
		t.Run(serves, func(t *testing.T) {
			t.Parallel()
			p := newPipe(t)
			p.llm.Accepts(serves)
			var log syncBuffer
			p.opts.Log = slog.New(slog.NewTextHandler(&log, nil))
			var eps []*graph.Episode
			for i, name := range []string{"Ada", "Bruno", "Chen", "Dora", "Emeka", "Farah"} {
				eps = append(eps, p.add(p.space(fmt.Sprint(i)), p.llm.Knows(name, "Acme")))
			}
			p.start(p.runner(3, 1))
			for _, e := range p.wait(eps, 30*time.Second) {
				if e.Status != graph.StatusDone {
					t.Fatalf("%s: %s (%s)", e.UUID, e.Status, e.LastError)
				}
			}
			if n := strings.Count(log.String(), "refuses structured output"); n != steps {
				t.Errorf("%d fallback warnings, want %d:\n%s", n, steps, log.String())
			}
			reqs := p.llm.Requests()
			refused := 0
			for _, r := range reqs {
				if r.Mode != serves {
					refused++
				}
			}
			if refused > 3*steps { // at most one refused call per worker and step
				t.Errorf("%d of %d calls asked for a refused mode", refused, len(reqs))
			}
			if last := reqs[len(reqs)-1]; last.Mode != serves {
				t.Errorf("the last call asked for %s, want %s", last.Mode, serves)
			}
		})
	}
}

// TestStructuredOutput_Repair: an answer cut off at max_tokens is not read, and the
// retry is not the same request: it shows the model its answer and what was wrong,
// at a higher temperature. Chat and embedding calls are counted apart; the cut-off
// answer is counted as a runaway (memgate_llm_errors_total{kind="cut_off"}).
func TestStructuredOutput_Repair(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	p.llm.Answer("Alice works at Acme", aliceAcme)
	p.llm.Runaway(1)
	group := p.space("a")
	ep := p.add(group, "Alice works at Acme as an engineer.")
	p.start(p.runner(1, 1))
	if e := p.wait([]*graph.Episode{ep}, 30*time.Second)[0]; e.Status != graph.StatusDone {
		t.Fatalf("%s: %s", e.Status, e.LastError)
	}
	reqs := p.llm.Requests()
	if len(reqs) != 2 || reqs[0].Messages != 2 || reqs[1].Messages != 4 || reqs[1].Temperature <= reqs[0].Temperature {
		t.Fatalf("requests %+v, want the first and a repair with the answer, the error and a higher temperature", reqs)
	}
	if ents, facts := p.graphOf(group, "Alice", "Acme"); len(ents) != 2 || len(facts) != 1 {
		t.Fatalf("entities %v, %d facts; want the repaired answer's", keys(ents), len(facts))
	}
	if n, ok := p.metric.LLMErrors.Load("cut_off"); !ok || n.(*atomic.Int64).Load() != 1 {
		t.Errorf("cut_off errors counted: %v, want 1", n)
	}
	if chat, emb := p.metric.ChatCalls.Load(), p.metric.EmbeddingCalls.Load(); chat != p.llm.ChatCalls.Load() ||
		emb != p.llm.EmbeddingCalls.Load() || emb == 0 {
		t.Errorf("metrics: %d chat and %d embedding calls; the server saw %d and %d", chat, emb,
			p.llm.ChatCalls.Load(), p.llm.EmbeddingCalls.Load())
	}
}

// syncBuffer is a log a test reads while workers write to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRules_CheckTheModel: the answers are what the local 1.5B model gave for these
// sentences (make eval): the manager's departure put on the speaker, a move a year
// early, "left" as a relation of its own, the new job not ending the old one. With llm.rules the offline rules check them:
// the departure is a fact about Erik ending at the end of April, the new job starts in
// June 2025 as written (the model's wording kept), and the old job ends at the end of
// May. Without the rules, none of the three holds.
func TestRules_CheckTheModel(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	entity := func(name, typ string) map[string]any { return map[string]any{"name": name, "type": typ, "summary": ""} }
	fact := func(src, rel, tgt, text string, valid, invalid any) map[string]any {
		return map[string]any{"source": src, "target": tgt, "relation": rel, "fact": text, "valid_at": valid, "invalid_at": invalid}
	}
	priya, halvorsen := entity("Priya Natarajan", "Person"), entity("Halvorsen Logistics", "Organization")
	lines := []struct {
		text   string
		at     string
		answer map[string]any
	}{
		{"I work at Halvorsen Logistics.", "2025-01-14", map[string]any{"entities": []any{priya, halvorsen},
			"facts": []any{fact("Priya Natarajan", "WORKS_AT", "Halvorsen Logistics", "Priya works at Halvorsen Logistics.", nil, nil)}}},
		{"Erik told the team today that he is leaving Halvorsen Logistics at the end of April.", "2025-04-22",
			map[string]any{"entities": []any{priya, entity("Erik", "Person"), halvorsen},
				"facts": []any{fact("Priya Natarajan", "REPORTS_TO", "Halvorsen Logistics", "Erik is leaving Halvorsen Logistics.", "2025-04-22T16:20:00Z", nil)}}},
		{"Big news: as of June 2025 I work at Nordvik Energy. I left Halvorsen Logistics at the end of May.", "2025-06-16",
			map[string]any{"entities": []any{priya, entity("Nordvik Energy", "Organization"), halvorsen},
				"facts": []any{
					fact("Priya Natarajan", "WORKS_AT", "Nordvik Energy", "Priya Natarajan works at Nordvik Energy.", "2024-06-01T00:00:00Z", nil),
					fact("Priya Natarajan", "LEFT_JOB", "Halvorsen Logistics", "Priya left Halvorsen Logistics.", "2025-06-16T00:00:00Z", nil)}}},
	}
	run := func(rules bool) (map[string]*graph.EntityNode, []*graph.Fact) {
		group := p.space(fmt.Sprint("rules-", rules))
		var eps []*graph.Episode
		for _, l := range lines {
			eps = append(eps, p.addAt(group, "Priya Natarajan (user): "+l.text+"\n", *date(l.at)))
		}
		r := p.runner(1, 1)
		if rules {
			r.Extractor = extract.WithRules{Model: r.Extractor}
		}
		stop := p.start(r)
		defer stop()
		for _, e := range p.wait(eps, 30*time.Second) {
			if e.Status != graph.StatusDone {
				t.Fatalf("rules %v: %s %s", rules, e.Status, e.LastError)
			}
		}
		return p.graphOf(group, "Priya Natarajan", "Erik", "Halvorsen Logistics", "Nordvik Energy")
	}
	for _, l := range lines {
		p.llm.Answer(l.text, l.answer)
	}
	// Asked whether the new job ends the old one, the small model said no.
	p.llm.Answer("new: Priya Natarajan works at Nordvik Energy.", map[string]any{"pair_1": false})
	// find is the fact src rel tgt, or nil.
	find := func(ents map[string]*graph.EntityNode, facts []*graph.Fact, src, rel, tgt string) *graph.Fact {
		for _, f := range facts {
			if s, o := ents[src], ents[tgt]; s != nil && o != nil && f.SourceUUID == s.UUID && f.Name == rel && f.TargetUUID == o.UUID {
				return f
			}
		}
		return nil
	}
	on := func(at *time.Time, day string) bool { return at != nil && at.Format(time.DateOnly) == day }
	checks := func(ents map[string]*graph.EntityNode, facts []*graph.Fact) []string {
		var held []string
		if f := find(ents, facts, "Erik", "WORKS_AT", "Halvorsen Logistics"); f != nil && on(f.InvalidAt, "2025-04-30") {
			held = append(held, "Erik left at the end of April")
		}
		if f := find(ents, facts, "Priya Natarajan", "WORKS_AT", "Nordvik Energy"); f != nil && on(f.ValidAt, "2025-06-01") &&
			f.InvalidAt == nil && f.Fact == "Priya Natarajan works at Nordvik Energy." {
			held = append(held, "Priya at Nordvik from June 2025")
		}
		if f := find(ents, facts, "Priya Natarajan", "WORKS_AT", "Halvorsen Logistics"); f != nil && on(f.InvalidAt, "2025-05-31") {
			held = append(held, "Priya left Halvorsen at the end of May")
		}
		return held
	}
	if held := checks(run(true)); len(held) != 3 {
		t.Errorf("with the rules, only %q hold", held)
	}
	if held := checks(run(false)); len(held) != 0 {
		t.Errorf("without the rules, %q hold: the test does not show what the rules do", held)
	}
}

// TestPipeline_ConflictsForReview: with Review (memory.conflicts: review) the LLM
// judge's contradiction ends nothing: Bob's move to Berlin leaves Paris current, both
// facts name one conflict of their space, listed with them; tennis, judged no
// contradiction of chess, makes none.
func TestPipeline_ConflictsForReview(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	entity := func(name, typ string) map[string]any { return map[string]any{"name": name, "type": typ, "summary": ""} }
	fact := func(target, relation, text string, validAt any) map[string]any {
		return map[string]any{"source": "Bob", "target": target, "relation": relation, "fact": text, "valid_at": validAt, "invalid_at": nil}
	}
	p.llm.Answer("Bob has a flat in Paris and plays chess.", map[string]any{
		"entities": []any{entity("Bob", "Person"), entity("Paris", "Location"), entity("Chess", "Concept")},
		"facts":    []any{fact("Paris", "LIVES_IN", "Bob lives in Paris.", nil), fact("Chess", "PLAYS", "Bob plays chess.", nil)}})
	p.llm.Answer("In June 2025 Bob moved to Berlin.", map[string]any{
		"entities": []any{entity("Bob", "Person"), entity("Berlin", "Location")},
		"facts":    []any{fact("Berlin", "LIVES_IN", "Bob lives in Berlin.", "2025-06-01")}})
	p.llm.Answer("Bob took up tennis.", map[string]any{
		"entities": []any{entity("Bob", "Person"), entity("Tennis", "Concept")},
		"facts":    []any{fact("Tennis", "PLAYS", "Bob plays tennis.", nil)}})
	p.llm.Answer("new: Bob lives in Berlin.", map[string]any{"pair_1": true})
	p.llm.Answer("new: Bob plays tennis.", map[string]any{"pair_1": false})
	group := p.space("a")
	eps := []*graph.Episode{
		p.addAt(group, "Bob has a flat in Paris and plays chess.", *date("2024-01-10")),
		p.addAt(group, "In June 2025 Bob moved to Berlin.", *date("2025-07-01")),
		p.addAt(group, "Bob took up tennis.", *date("2025-08-01")),
	}
	r := p.runner(2, 2)
	r.Resolver.Review = true
	p.start(r)
	for _, e := range p.wait(eps, 60*time.Second) {
		if e.Status != graph.StatusDone {
			t.Fatalf("%s: %s (%s)", e.UUID, e.Status, e.LastError)
		}
	}
	page, err := p.db.Conflicts(context.Background(), graph.Visible{GroupIDs: []string{group}}, graph.PageRequest{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Conflicts) != 1 {
		t.Fatalf("%d conflicts, want Paris against Berlin only", len(page.Conflicts))
	}
	c := page.Conflicts[0]
	if c.Old.Target.Name != "Paris" || c.New.Target.Name != "Berlin" || c.Conflict.GroupID != group || c.Conflict.Episode != eps[1].UUID {
		t.Errorf("conflict %+v: %s against %s, want Paris (old) against Berlin (new), found by the move", c.Conflict, c.Old.Target.Name, c.New.Target.Name)
	}
	for _, f := range []*graph.Fact{c.Old.Fact, c.New.Fact} {
		if f.InvalidAt != nil || f.ExpiredAt != nil || len(f.Conflicts) != 1 || f.Conflicts[0] != c.Conflict.UUID {
			t.Errorf("fact %q: invalid_at %v, expired_at %v, conflicts %v; want current and naming the conflict", f.Fact, f.InvalidAt, f.ExpiredAt, f.Conflicts)
		}
	}
}

// A fact stated directly (POST /v1/facts writes it as a json memory with
// source_description direct) is read as given on the model's path: no chat call, its
// relation, names and stated start kept.
func TestPipeline_DirectFact(t *testing.T) {
	p := newPipe(t)
	group := p.space("direct")
	since := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	x := &graph.Extracted{Entities: []graph.ExtractedEntity{{Name: "Alice", Type: "Person"}, {Name: "Lisbon", Type: "Location"}},
		Facts: []graph.ExtractedFact{{Source: "Alice", Target: "Lisbon", Relation: "LIVES_IN", Fact: "Alice lives in Lisbon", ValidAt: &since}}}
	p.agent(p.scope + "direct")
	now := time.Now().UTC()
	e := &graph.Episode{UUID: uuid.NewString(), GroupID: group, AgentID: p.scope + "direct", Source: graph.SourceJSON,
		SourceDescription: graph.SourceDirect, Content: graph.DirectContent(x), CreatedAt: now, ValidAt: now,
		Status: graph.StatusQueued, Name: "direct"}
	if res := p.db.CreateEpisodes(context.Background(), []*graph.Episode{e})[0]; res.Err != nil {
		t.Fatal(res.Err)
	}
	p.start(p.runner(1, 1))
	if got := p.wait([]*graph.Episode{e}, 30*time.Second)[0]; got.Status != graph.StatusDone {
		t.Fatalf("the direct memory: %s %s", got.Status, got.LastError)
	}
	if calls := p.llm.Requests(); len(calls) != 0 {
		t.Errorf("%d chat calls for a direct fact: %+v", len(calls), calls)
	}
	_, facts := p.graphOf(group, "Alice", "Lisbon")
	if len(facts) != 1 || facts[0].Name != "LIVES_IN" || facts[0].Fact != "Alice lives in Lisbon" ||
		facts[0].ValidAt == nil || !facts[0].ValidAt.Equal(since) || facts[0].StartAssumed {
		t.Fatalf("facts: %+v", facts)
	}
}

// TestPipeline_TurnBefore: extraction embeds a memory alone and read after the turn
// before it (its agent's, in its space, said within graph.TurnWindow), so a reply is
// found by what it answers: vector search scores it by the mean of a query's cosines
// with both (as Neo4j scores a cosine); a memory said long after the one before it,
// or first, gets no such vector, and when the turn before goes, the reply loses the
// vector its words made and is embedded again without them.
func TestPipeline_TurnBefore(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	p.start(p.runner(2, 3))
	ctx := context.Background()
	group := p.space("turns")
	at := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	question := p.addAt(group, "Did you adopt the beagle from the shelter?", at)
	reply := p.addAt(group, "Yes, last week!", at.Add(time.Minute))
	later := p.addAt(group, "The garden needs water.", at.Add(time.Hour))
	p.wait([]*graph.Episode{question, reply, later}, time.Minute)
	emb := p.opts
	emb.Model = "embedder"
	want, err := extract.NewOpenAI(emb, nil).Embed(ctx, []string{question.Content + " " + reply.Content, reply.Content})
	if err != nil {
		t.Fatal(err)
	}
	vectors := func() map[string][2][]float32 {
		out := map[string][2][]float32{}
		for _, r := range neo4jtest.Rows(t, `MATCH (e:Episodic) WHERE e.group_id = $g AND e.status = 'done'
			RETURN e.uuid AS id, e.content_embedding AS alone, e.turn_embedding AS turn`, map[string]any{"g": group}) {
			out[r["id"].(string)] = [2][]float32{float32s(r["alone"]), float32s(r["turn"])}
		}
		return out
	}
	got := vectors()
	meaning, _ := graph.TurnMeaning(want[1], want[0])
	if v := got[reply.UUID]; graph.Cosine(v[1], meaning) < 0.9999 || graph.Cosine(v[0], want[1]) < 0.9999 {
		t.Errorf("the reply's vectors are not its words after the question's with its words alone, and its words alone (cosines %.4f, %.4f)",
			graph.Cosine(v[1], meaning), graph.Cosine(v[0], want[1]))
	}
	query, err := extract.NewOpenAI(emb, nil).Embed(ctx, []string{"Where did the beagle come from?"})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := p.db.EpisodesByVector(ctx, query[0], graph.Visible{GroupIDs: []string{group}}, graph.SearchFilter{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	scored := func(c float64) float64 { return (1 + c) / 2 }
	if len(hits) != 3 {
		t.Fatalf("%d memories found by vector, want 3", len(hits))
	}
	for _, h := range hits {
		score := scored(graph.Cosine(query[0], got[h.Episode.UUID][0]))
		if h.Episode.UUID == reply.UUID {
			score = (scored(graph.Cosine(query[0], want[1])) + scored(graph.Cosine(query[0], want[0]))) / 2
		}
		if math.Abs(h.Score-score) > 1e-5 {
			t.Errorf("%q scored %.6f by vector, want %.6f", h.Episode.Content, h.Score, score)
		}
	}
	for _, e := range []*graph.Episode{question, later} {
		if v := got[e.UUID]; v[0] == nil || v[1] != nil {
			t.Errorf("%q: embedded alone %v, after a turn before it %v; want only alone", e.Content, v[0] != nil, v[1] != nil)
		}
	}
	if err := p.db.DeleteEpisode(ctx, question.UUID, graph.Visible{GroupIDs: []string{group}},
		func(*graph.Episode) (*graph.AuditEvent, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if n := neo4jtest.Count(t, `MATCH (e:Episodic {uuid: $id}) WHERE e.turn_embedding IS NOT NULL RETURN count(e)`,
		map[string]any{"id": reply.UUID}); n != 0 {
		t.Error("the reply kept the vector the deleted question's words made")
	}
	p.wait([]*graph.Episode{reply}, time.Minute)
	if v := vectors()[reply.UUID]; v[0] == nil || v[1] != nil {
		t.Errorf("extracted again, the reply is embedded alone %v, after a turn before it %v; want only alone", v[0] != nil, v[1] != nil)
	}
}

func float32s(v any) []float32 {
	list, _ := v.([]any)
	var out []float32
	for _, x := range list {
		out = append(out, float32(x.(float64)))
	}
	return out
}

// TestPipeline_RelativeStart: a model that gives a fact the reference time as its
// start, where the fact says "last weekend", gets the weekend resolved against the
// reference time, stated; where the fact says nothing of when, the reference time
// is kept as assumed (valid_at_assumed), not as a stated start.
func TestPipeline_RelativeStart(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	at := time.Date(2025, 10, 8, 14, 0, 0, 0, time.UTC) // a Wednesday
	given := at.Format(time.RFC3339)
	p.llm.Answer("We adopted Biscuit last weekend", map[string]any{
		"entities": []map[string]any{{"name": "Dana Reyes", "type": "Person"}, {"name": "Biscuit", "type": ""}},
		"facts": []map[string]any{{"source": "Dana Reyes", "target": "Biscuit", "relation": "HAS_PET",
			"fact": "Dana Reyes adopted Biscuit last weekend.", "valid_at": given, "invalid_at": nil}},
	})
	p.llm.Answer("Dana likes chess", map[string]any{
		"entities": []map[string]any{{"name": "Dana Reyes", "type": "Person"}, {"name": "chess", "type": ""}},
		"facts": []map[string]any{{"source": "Dana Reyes", "target": "chess", "relation": "LIKES",
			"fact": "Dana Reyes likes chess.", "valid_at": given, "invalid_at": nil}},
	})
	group := p.space("rel")
	eps := []*graph.Episode{p.addAt(group, "Dana Reyes: We adopted Biscuit last weekend!", at),
		p.addAt(group, "Dana Reyes: Dana likes chess, by the way.", at.Add(time.Minute))}
	p.start(p.runner(1, 3))
	for _, e := range p.wait(eps, time.Minute) {
		if e.Status != graph.StatusDone {
			t.Fatalf("episode %s: %s (%s)", e.UUID, e.Status, e.LastError)
		}
	}
	_, facts := p.graphOf(group, "Dana Reyes")
	starts := map[string]string{}
	for _, f := range facts {
		starts[f.Name] = fmt.Sprintf("%s assumed=%v", f.ValidAt.UTC().Format("2006-01-02"), f.StartAssumed)
	}
	want := map[string]string{"HAS_PET": "2025-10-04 assumed=false", "LIKES": "2025-10-08 assumed=true"}
	if fmt.Sprint(starts) != fmt.Sprint(want) {
		t.Errorf("starts %v, want %v", starts, want)
	}
}

// TestPipeline_Ungrounded: what the model adds that the conversation never named is
// dropped and counted (ungrounded): the prompt's own example (Dana Reyes at Globex,
// formerly Initech) answered for an episode about someone else, and a fact whose
// employer the speaker did not name. The speaker the episode names is kept, and a
// name said in an earlier episode of the context counts as said; a fact only that
// earlier episode states is dropped (unstated).
func TestPipeline_Ungrounded(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	example := map[string]any{
		"entities": []map[string]any{{"name": "Dana Reyes", "type": "Person", "summary": "The user; works at Globex."},
			{"name": "Globex", "type": "Organization", "summary": "Dana's employer."},
			{"name": "Initech", "type": "Organization", "summary": "Dana's former employer."},
			{"name": "Lena Park", "type": "Person", "summary": "Started a job."},
			{"name": "Contoso", "type": "Organization", "summary": "Lena's new employer."},
			{"name": "Bergen", "type": "Location", "summary": "Where Lena lives."}},
		"facts": []map[string]any{
			{"source": "Dana Reyes", "target": "Globex", "relation": "WORKS_AT", "fact": "Dana Reyes works at Globex.", "valid_at": nil, "invalid_at": nil},
			{"source": "Lena Park", "target": "Contoso", "relation": "WORKS_AT", "fact": "Lena Park works at Contoso.", "valid_at": nil, "invalid_at": nil},
			{"source": "Lena Park", "target": "Bergen", "relation": "LIVES_IN", "fact": "Lena Park lives in Bergen.", "valid_at": nil, "invalid_at": nil}},
	}
	p.llm.Answer("I started a new job", example)
	p.llm.Answer("I moved to Bergen", map[string]any{
		"entities": []map[string]any{{"name": "Lena Park", "type": "Person", "summary": ""}, {"name": "Bergen", "type": "Location", "summary": ""}},
		"facts": []map[string]any{{"source": "Lena Park", "target": "Bergen", "relation": "LIVES_IN", "fact": "Lena Park moved to Bergen in May.",
			"valid_at": nil, "invalid_at": nil}},
	})
	p.llm.Answer("I drink green tea", map[string]any{
		"entities": []map[string]any{{"name": "User", "type": "Person", "summary": "Drinks tea."}, {"name": "green tea", "type": "Other", "summary": ""}},
		"facts": []map[string]any{{"source": "User", "target": "green tea", "relation": "LIKES", "fact": "The user likes green tea.",
			"valid_at": nil, "invalid_at": nil}},
	})
	group, unnamed := p.space("ground"), p.space("unnamed")
	at := time.Date(2025, 7, 10, 9, 0, 0, 0, time.UTC)
	eps := []*graph.Episode{p.addAt(group, "Lena Park: I moved to Bergen in May.", at),
		p.addAt(group, "Lena Park: I started a new job last week!", at.Add(time.Minute)),
		p.addAt(unnamed, "I drink green tea every morning.", at)}
	p.start(p.runner(1, 3))
	for _, e := range p.wait(eps, time.Minute) {
		if e.Status != graph.StatusDone {
			t.Fatalf("episode %s: %s (%s)", e.UUID, e.Status, e.LastError)
		}
	}
	ents, facts := p.graphOf(group, "Lena Park", "Bergen", "Dana Reyes", "Globex", "Initech", "Contoso")
	if _, ok := ents["Lena Park"]; !ok || ents["Bergen"] == nil || len(ents) != 2 {
		t.Errorf("entities %v, want Lena Park and Bergen only", keys(ents))
	}
	var got []string
	for _, f := range facts {
		got = append(got, f.Name)
	}
	if len(got) != 1 || got[0] != "LIVES_IN" {
		t.Errorf("facts %v, want Lena's LIVES_IN alone", got)
	}
	// A memory with no speaker named: the speaker's role is the speaker, said or not.
	if _, tea := p.graphOf(unnamed, "User", "green tea"); len(tea) != 1 {
		t.Errorf("the unnamed speaker's facts %+v, want its LIKES", tea)
	}
	// The second memory's answer repeats what the first said (Lena lives in Bergen):
	// the context's words, which that memory does not state.
	for reason, want := range map[string]int64{"entity/ungrounded": 4, "fact/ungrounded": 2, "fact/unstated": 1} {
		if n, ok := p.metric.Drops.Load(reason); !ok || n.(*atomic.Int64).Load() < want {
			t.Errorf("%s dropped %v times, want at least %d", reason, n, want)
		}
	}
}

// TestPipeline_AttributeCorrection: "Correction: Biscuit is a basset hound, not a
// beagle" ends the stored fact that called Biscuit a beagle, as of the correction,
// though the model's answer for the correction only states the new one.
func TestPipeline_AttributeCorrection(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	pet := func(fact, name string) map[string]any {
		return map[string]any{
			"entities": []map[string]any{{"name": "User", "type": "Person", "summary": ""}, {"name": "Biscuit", "type": "Other", "summary": ""}},
			"facts":    []map[string]any{{"source": "User", "target": "Biscuit", "relation": name, "fact": fact, "valid_at": nil, "invalid_at": nil}},
		}
	}
	p.llm.Answer("I adopted a beagle", pet("The user adopted a beagle named Biscuit.", "HAS_PET"))
	p.llm.Answer("Correction: Biscuit", pet("The user's dog Biscuit is a basset hound.", "HAS_BREED"))
	group := p.space("a")
	at := time.Date(2025, 10, 6, 9, 0, 0, 0, time.UTC)
	first := p.addAt(group, "I adopted a beagle named Biscuit!", at)
	p.start(p.runner(1, 1))
	p.wait([]*graph.Episode{first}, time.Minute)
	fix := p.addAt(group, "Correction: Biscuit is a basset hound, not a beagle.", at.Add(24*time.Hour))
	for _, e := range p.wait([]*graph.Episode{fix}, time.Minute) {
		if e.Status != graph.StatusDone {
			t.Fatalf("%s: %s (%s)", e.Content, e.Status, e.LastError)
		}
	}
	_, facts := p.graphOf(group, "User", "Biscuit")
	var current, ended []string
	for _, f := range facts {
		if f.InvalidAt == nil {
			current = append(current, f.Fact)
		} else if f.InvalidAt.Equal(fix.ValidAt) {
			ended = append(ended, f.Fact)
		}
	}
	if len(current) != 1 || current[0] != "The user's dog Biscuit is a basset hound." {
		t.Errorf("current facts %q, want the basset hound alone", current)
	}
	if len(ended) != 1 || ended[0] != "The user adopted a beagle named Biscuit." {
		t.Errorf("facts ended by the correction %q, want the beagle", ended)
	}
}

// TestPipeline_CorrectionsAndRetractions: with the model extracting and judging no
// contradiction, "Actually, ..." replaces what a fact of the same relation said,
// "Scratch that." ends what the last sentence of the speaker's previous memory said
// and nothing of another speaker's, and what a memory takes back within itself is not
// stored.
func TestPipeline_CorrectionsAndRetractions(t *testing.T) {
	t.Parallel()
	p := newPipe(t)
	says := func(src, relation, tgt, text string) map[string]any {
		return map[string]any{
			"entities": []map[string]any{{"name": src, "type": "Person", "summary": ""}, {"name": tgt, "type": "Other", "summary": ""}},
			"facts":    []map[string]any{{"source": src, "target": tgt, "relation": relation, "fact": text, "valid_at": nil, "invalid_at": nil}},
		}
	}
	p.llm.Answer("I work at Globex.", says("Dana", "WORKS_AT", "Globex", "Dana works at Globex."))
	p.llm.Answer("Actually, I work at Initech.", says("Dana", "WORKS_AT", "Initech", "Dana works at Initech."))
	p.llm.Answer("new: Dana works at Initech.", map[string]any{"pair_1": false})
	p.llm.Answer("Actually, I also work at Oxfam.", says("Dana", "WORKS_AT", "Oxfam", "Dana also works at Oxfam."))
	p.llm.Answer("new: Dana also works at Oxfam.", map[string]any{"pair_1": false})
	p.llm.Answer("I have a dog named Rex. I live in Lisbon.", map[string]any{
		"entities": []map[string]any{{"name": "Dana", "type": "Person", "summary": ""}, {"name": "Rex", "type": "Other", "summary": ""},
			{"name": "Lisbon", "type": "Location", "summary": ""}},
		"facts": []map[string]any{
			{"source": "Dana", "target": "Rex", "relation": "HAS_PET", "fact": "Dana has a dog named Rex.", "valid_at": nil, "invalid_at": nil},
			{"source": "Dana", "target": "Lisbon", "relation": "LIVES_IN", "fact": "Dana lives in Lisbon.", "valid_at": nil, "invalid_at": nil}},
	})
	p.llm.Answer("I work at Hooli.", says("Sam", "WORKS_AT", "Hooli", "Sam works at Hooli."))
	p.llm.Answer("Scratch that.", map[string]any{"entities": []any{}, "facts": []any{}})
	p.llm.Answer("I like Porto, scratch that, I like Braga.", map[string]any{
		"entities": []map[string]any{{"name": "Dana", "type": "Person", "summary": ""}, {"name": "Porto", "type": "Location", "summary": ""},
			{"name": "Braga", "type": "Location", "summary": ""}},
		"facts": []map[string]any{
			{"source": "Dana", "target": "Porto", "relation": "LIKES", "fact": "Dana likes Porto.", "valid_at": nil, "invalid_at": nil},
			{"source": "Dana", "target": "Braga", "relation": "LIKES", "fact": "Dana likes Braga.", "valid_at": nil, "invalid_at": nil}},
	})
	group := p.space("a")
	at := time.Date(2025, 10, 6, 9, 0, 0, 0, time.UTC)
	var eps []*graph.Episode
	for i, text := range []string{
		"Dana (user): I work at Globex.",
		"Dana (user): Actually, I work at Initech.",    // a day later
		"Dana (user): Actually, I also work at Oxfam.", // one more: Initech stays
		"Dana (user): I have a dog named Rex. I live in Lisbon.",
		"Dana (user): Scratch that.", // a minute later: its last sentence goes
		"Sam (user): I work at Hooli.",
		"Dana (user): Scratch that.", // after Sam's memory: nothing of Sam's goes
		"Dana (user): I like Porto, scratch that, I like Braga.",
	} {
		eps = append(eps, p.addAt(group, text, at.Add(time.Duration(i)*time.Minute+time.Duration(min(i, 1))*24*time.Hour)))
	}
	p.start(p.runner(1, 1))
	for _, e := range p.wait(eps, time.Minute) {
		if e.Status != graph.StatusDone {
			t.Fatalf("%s: %s (%s)", e.Content, e.Status, e.LastError)
		}
	}
	_, facts := p.graphOf(group, "Dana", "Sam")
	got := map[string]string{}
	for _, f := range facts {
		got[f.Fact] = "current"
		if f.InvalidAt != nil {
			got[f.Fact] = "ended " + f.InvalidAt.Format("01-02 15:04")
		}
	}
	want := map[string]string{
		"Dana works at Globex.":     "ended " + eps[1].ValidAt.Format("01-02 15:04"),
		"Dana works at Initech.":    "current",
		"Dana also works at Oxfam.": "current",
		"Dana lives in Lisbon.":     "ended " + eps[4].ValidAt.Format("01-02 15:04"),
		"Dana has a dog named Rex.": "current",
		"Sam works at Hooli.":       "current",
		"Dana likes Braga.":         "current",
	}
	if !maps.Equal(got, want) {
		t.Errorf("facts %v\nwant %v", got, want)
	}
}
