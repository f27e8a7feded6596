package neo4jstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// summaryWorld is one agent whose public space the pipeline ingests with the scripted
// LLM: Dana Reyes is mentioned by a memory that lasts (she lives in Porto, "Lives by
// the sea.") and by one that goes, whose words (a word of this test alone) the
// extraction puts into her description and, through a fact, her summary.
type summaryWorld struct {
	t              *testing.T
	db             *neo4jstore.DB
	llm            *llmtest.Server
	word           string
	public, hidden string // the agent's public and private spaces
	keep, gone     *graph.Episode
	stop           func() // stops the pipeline
}

func newSummaryWorld(t *testing.T) *summaryWorld {
	t.Helper()
	db := neo4jtest.DB(t)
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	agent := "sum-" + run
	if err := db.CreateAgent(context.Background(), graph.DefaultOrg, &graph.Agent{ID: agent, OwnerID: "owner-" + run, CreatedAt: time.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	w := &summaryWorld{t: t, db: db, llm: llmtest.New(), word: "quokka" + run,
		public: graph.DefaultOrg.Public(agent).GroupID(), hidden: graph.DefaultOrg.Private(agent).GroupID()}
	t.Cleanup(w.llm.Close)
	person := func(summary string) map[string]any {
		return map[string]any{"name": "Dana Reyes", "type": "Person", "summary": summary}
	}
	w.llm.Answer("lives in Porto", map[string]any{
		"entities": []map[string]any{person("Lives by the sea."), {"name": "Porto", "type": "Location", "summary": "A city."}},
		"facts": []map[string]any{{"source": "Dana Reyes", "target": "Porto", "relation": "LIVES_IN",
			"fact": "Dana Reyes lives in Porto.", "valid_at": nil, "invalid_at": nil}},
	})
	w.llm.Answer("collects", map[string]any{
		"entities": []map[string]any{person("Collects " + w.word + " stamps."), {"name": "Acme", "type": "Organization", "summary": "Sells " + w.word + " stamps."}},
		"facts": []map[string]any{{"source": "Dana Reyes", "target": "Acme", "relation": "BUYS_FROM",
			"fact": "Dana Reyes buys " + w.word + " stamps from Acme.", "valid_at": nil, "invalid_at": nil}},
	})
	w.llm.Answer("sorts", map[string]any{"entities": []map[string]any{person("Sorts old letters.")}, "facts": []any{}})
	opts := extract.OpenAIOptions{BaseURL: w.llm.BaseURL(), APIKey: "test", Model: "scripted", Timeout: 5 * time.Second,
		MaxConcurrency: 2, MaxRetries: 2, RetryBase: 5 * time.Millisecond, Dimensions: neo4jtest.Dimensions,
		Metrics: &extract.Metrics{}, Log: neo4jtest.Logger(t)}
	r := &extract.Runner{Queue: db, Extractor: extract.NewOpenAI(opts, extract.DefaultEntityTypes), Types: extract.DefaultEntityTypes,
		Resolver: &extract.Resolver{Know: db, Embedder: extract.Hashing{Dimensions: neo4jtest.Dimensions}, Now: time.Now},
		Workers:  1, Lease: time.Minute, MaxAttempts: 3, Backoff: 20 * time.Millisecond, Poll: neo4jtest.RunnerPoll,
		Log: neo4jtest.Logger(t), Metrics: &extract.Metrics{}, Scope: "agent-" + agent + "-"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	w.stop = func() { cancel(); <-done }
	t.Cleanup(w.stop)

	// The lasting memory first, so the one that goes is the newest: its words lead.
	w.keep = w.add(w.public, "Dana Reyes lives in Porto, a city by the sea.")
	w.gone = w.add(w.public, "Dana Reyes collects "+w.word+" stamps from Acme, which sells them.")
	return w
}

func (w *summaryWorld) vis() graph.Visible {
	return graph.Visible{GroupIDs: []string{w.public, w.hidden}}
}

// add writes a memory to group and waits until it is ingested.
func (w *summaryWorld) add(group, content string) *graph.Episode {
	w.t.Helper()
	space, _ := graph.ParseGroupID(group)
	now := time.Now().UTC()
	e := &graph.Episode{UUID: uuid.NewString(), Name: "n", GroupID: group, AgentID: space.Agent, Source: graph.SourceText,
		Content: content, CreatedAt: now, ValidAt: now, Status: graph.StatusQueued}
	if res := w.db.CreateEpisodes(context.Background(), []*graph.Episode{e})[0]; res.Err != nil {
		w.t.Fatal(res.Err)
	}
	w.wait(e.UUID)
	return e
}

// wait polls a memory until its extraction is done.
func (w *summaryWorld) wait(id string) {
	w.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		e, err := w.db.GetEpisode(context.Background(), id, w.vis())
		if err != nil {
			w.t.Fatal(err)
		}
		if e.Status == graph.StatusDone {
			return
		}
		if e.Status == graph.StatusFailed || time.Now().After(deadline) {
			w.t.Fatalf("memory %s: %s %s", id, e.Status, e.LastError)
		}
	}
}

// dana is the entity Dana Reyes of group.
func (w *summaryWorld) dana(group string) *graph.EntityNode {
	w.t.Helper()
	near, err := w.db.Neighbourhoods(context.Background(), []graph.NeighbourhoodQuery{{GroupID: group, Names: []string{"Dana Reyes"}}}, 10)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, e := range near[0].Entities {
		if e.Name == "Dana Reyes" {
			return e
		}
	}
	w.t.Fatalf("no Dana Reyes in %s", group)
	return nil
}

// update changes the memory that goes as a writer would (UpdateEpisode).
func (w *summaryWorld) update(mutate func(*graph.Episode)) {
	w.t.Helper()
	_, err := w.db.UpdateEpisode(context.Background(), w.gone.UUID, w.vis(), 10,
		func(cur *graph.Episode, _ []graph.Version) (*graph.Episode, *graph.AuditEvent, error) {
			next := *cur
			now := time.Now().UTC()
			next.Version, next.UpdatedAt, next.UpdatedBy, next.Status = cur.Version+1, &now, "tester", graph.StatusQueued
			mutate(&next)
			return &next, nil, nil
		})
	if err != nil {
		w.t.Fatal(err)
	}
}

// noWord checks that nothing the public space shows of its entities holds the word:
// the entity read by id, entity text search by both plans, the one-round-trip search,
// and the entities facts are returned with.
func (w *summaryWorld) noWord(dana *graph.EntityNode) {
	w.t.Helper()
	ctx := context.Background()
	public := graph.Visible{GroupIDs: []string{w.public}}
	got, err := w.db.Entity(ctx, dana.UUID, public)
	if err != nil {
		w.t.Fatalf("Dana is gone from the public space: %v", err)
	}
	if strings.Contains(strings.ToLower(got.Summary+" "+got.Description), w.word) {
		w.t.Errorf("Dana's summary still holds the word: %q (description %q)", got.Summary, got.Description)
	}
	if !strings.Contains(got.Summary, "Lives by the sea.") || !strings.Contains(got.Summary, "Dana Reyes lives in Porto.") {
		w.t.Errorf("Dana's summary lost the lasting memory's words: %q", got.Summary)
	}
	for plan, exactMax := range map[string]int{"exact": neo4jstore.ExactSearchMax, "index": 0} {
		hits, err := w.db.EntitiesByTextPlan(ctx, w.word, public, 10, exactMax)
		if err != nil {
			w.t.Fatal(err)
		}
		for _, h := range hits {
			w.t.Errorf("entity search (%s plan) for the word finds %s: %q", plan, h.Entity.Name, h.Entity.Summary)
		}
	}
	found, err := w.db.SearchSmall(ctx, graph.Retrieval{Text: w.word + " Dana Porto", Facts: true, Entities: true}, public, graph.SearchFilter{}, 10)
	if err != nil || found == nil {
		w.t.Fatalf("search_small: %v, %v", found, err)
	}
	var shown []*graph.EntityNode
	for _, hits := range found.Entities {
		for _, h := range hits {
			if strings.Contains(strings.Join(strings.Fields(strings.ToLower(h.Entity.Summary+" "+h.Entity.Name)), " "), w.word) {
				w.t.Errorf("search finds %s by the word: %q", h.Entity.Name, h.Entity.Summary)
			}
		}
	}
	for _, hits := range found.Facts {
		for _, h := range hits {
			shown = append(shown, h.Source, h.Target)
		}
	}
	facts, err := w.db.FactsByText(ctx, "Dana Porto", public, graph.SearchFilter{}, 10)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, h := range facts {
		shown = append(shown, h.Source, h.Target)
	}
	for _, e := range shown {
		if strings.Contains(strings.ToLower(e.Summary), w.word) {
			w.t.Errorf("a fact comes with %s, whose summary holds the word: %q", e.Name, e.Summary)
		}
	}
}

// TestSummaries_FollowTheirMemories: an entity's summary, description and search terms
// lose a memory's words when the memory stops supporting it (deleted, its content
// changed, moved to the private space), in the same transaction, and keep the words of
// the memory that still does: what the pipeline would have written from that memory
// alone. An entity mentioned by memories saved before mentions recorded their words
// keeps its description, less the words of a memory that recorded them.
func TestSummaries_FollowTheirMemories(t *testing.T) {
	t.Parallel()
	const alone = "Lives by the sea. Dana Reyes lives in Porto." // the lasting memory's summary of Dana

	t.Run("delete", func(t *testing.T) {
		t.Parallel()
		w := newSummaryWorld(t)
		before := w.dana(w.public)
		if !strings.Contains(before.Summary, "Collects "+w.word) || !strings.Contains(before.Summary, "buys "+w.word) {
			t.Fatalf("the setup did not put the word into Dana's summary: %q", before.Summary)
		}
		if err := w.db.DeleteEpisode(context.Background(), w.gone.UUID, w.vis(), func(*graph.Episode) (*graph.AuditEvent, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		w.noWord(before)
		if got := w.dana(w.public); got.Summary != alone || got.Description != "Lives by the sea." {
			t.Errorf("after the delete Dana's summary is %q, description %q; want %q", got.Summary, got.Description, alone)
		}
		// The same as the pipeline writes from the lasting memory alone, in a space
		// that never held the other.
		w.add(w.hidden, w.keep.Content)
		if got, want := w.dana(w.public), w.dana(w.hidden); got.Summary != want.Summary || got.Description != want.Description {
			t.Errorf("made again: %q (description %q); the pipeline from the lasting memory alone: %q (%q)",
				got.Summary, got.Description, want.Summary, want.Description)
		}
		terms := `MATCH (n:Entity {uuid: $a}), (m:Entity {uuid: $b}) WHERE n.name_terms = m.name_terms RETURN count(*)`
		if neo4jtest.Count(t, terms, map[string]any{"a": before.UUID, "b": w.dana(w.hidden).UUID}) != 1 {
			t.Error("the search terms made again differ from the pipeline's for the same summary")
		}
	})

	t.Run("update", func(t *testing.T) {
		t.Parallel()
		w := newSummaryWorld(t)
		before := w.dana(w.public)
		w.update(func(n *graph.Episode) { n.Content = "Dana Reyes sorts old letters." })
		w.noWord(before) // at once, before extraction runs again
		w.wait(w.gone.UUID)
		w.noWord(before)
		if got, want := w.dana(w.public).Summary, "Sorts old letters. "+alone; got != want {
			t.Errorf("after the new content is extracted Dana's summary is %q, want %q", got, want)
		}
	})

	t.Run("move", func(t *testing.T) {
		t.Parallel()
		w := newSummaryWorld(t)
		before := w.dana(w.public)
		w.update(func(n *graph.Episode) { n.GroupID = w.hidden })
		w.noWord(before)
		w.wait(w.gone.UUID)
		w.noWord(before)
		if got := w.dana(w.public); got.Summary != alone {
			t.Errorf("after the move Dana's public summary is %q, want %q", got.Summary, alone)
		}
		if got := w.dana(w.hidden); !strings.Contains(got.Summary, w.word) {
			t.Errorf("the memory's words did not follow it to the private space: %q", got.Summary)
		}
	})

	// Another memory of the space is being extracted while the memory goes: what its
	// extraction read (Dana's description with the word) is not written back; its
	// lease ends, its result is refused, and it is queued again, the attempt not
	// counted.
	t.Run("extraction", func(t *testing.T) {
		t.Parallel()
		w := newSummaryWorld(t)
		before := w.dana(w.public)
		w.stop()
		ctx := context.Background()
		space, _ := graph.ParseGroupID(w.public)
		now := time.Now().UTC()
		next := &graph.Episode{UUID: uuid.NewString(), Name: "n", GroupID: w.public, AgentID: space.Agent, Source: graph.SourceText,
			Content: "Dana Reyes sorts old letters.", CreatedAt: now, ValidAt: now, Status: graph.StatusQueued}
		if res := w.db.CreateEpisodes(ctx, []*graph.Episode{next})[0]; res.Err != nil {
			t.Fatal(res.Err)
		}
		worker := "w-" + next.UUID
		claimed, _, err := w.db.Claim(ctx, worker, w.public, time.Minute, 1, 0)
		if err != nil || len(claimed) != 1 || claimed[0].Episode.UUID != next.UUID {
			t.Fatalf("claim: %v, %d claimed", err, len(claimed))
		}
		resolver := &extract.Resolver{Know: w.db, Embedder: extract.Hashing{Dimensions: neo4jtest.Dimensions}, Now: time.Now}
		write, err := resolver.Resolve(ctx, claimed[0].Episode, &graph.Extracted{Entities: []graph.ExtractedEntity{
			{Name: "Dana Reyes", Type: "Person", Summary: "Sorts old letters."}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(write.Entities[0].Description, w.word) {
			t.Fatalf("the extraction did not read the word: %q", write.Entities[0].Description)
		}
		if err := w.db.DeleteEpisode(ctx, w.gone.UUID, w.vis(), func(*graph.Episode) (*graph.AuditEvent, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		errs, err := w.db.Complete(ctx, worker, []*graph.GraphWrite{write})
		if err != nil {
			t.Fatal(err)
		}
		if graph.ErrorCode(errs[0]) != graph.ECONFLICT {
			t.Errorf("the extraction that read the deleted memory's words was saved (%v), want its lease lost", errs[0])
		}
		w.noWord(before)
		got, err := w.db.GetEpisode(ctx, next.UUID, w.vis())
		if err != nil || got.Status != graph.StatusQueued || got.Attempts != 0 {
			t.Errorf("the memory whose extraction was refused: %+v, %v; want queued, no attempt counted", got, err)
		}
	})

	// Mentions saved before they recorded what their episode said: the description
	// cannot be made again from them, so it is kept, less what a recorded mention
	// that goes said; the facts part is made again all the same.
	t.Run("unrecorded", func(t *testing.T) {
		t.Parallel()
		w := newSummaryWorld(t)
		before := w.dana(w.public)
		unrecord := func(episode string) {
			t.Helper()
			if err := neo4jtest.Run(neo4jtest.URI(t), "MATCH (:Episodic {uuid: $id})-[m:MENTIONS]->() REMOVE m.description",
				map[string]any{"id": episode}); err != nil {
				t.Fatal(err)
			}
		}
		unrecord(w.keep.UUID)
		if err := w.db.DeleteEpisode(context.Background(), w.gone.UUID, w.vis(), func(*graph.Episode) (*graph.AuditEvent, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		w.noWord(before)
		if got := w.dana(w.public); got.Summary != alone {
			t.Errorf("Dana's summary is %q, want %q", got.Summary, alone)
		}

		// Neither the lasting memory nor the one that goes recorded anything: the
		// stored description stays (nothing is known to take out of it).
		w.gone = w.add(w.public, "Dana Reyes sorts old letters.")
		unrecord(w.gone.UUID)
		if err := w.db.DeleteEpisode(context.Background(), w.gone.UUID, w.vis(), func(*graph.Episode) (*graph.AuditEvent, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		if got, want := w.dana(w.public), "Sorts old letters. Lives by the sea."; got.Description != want || got.Summary != want+" Dana Reyes lives in Porto." {
			t.Errorf("Dana's description is %q, summary %q; want the stored description %q kept", got.Description, got.Summary, want)
		}
	})
}
