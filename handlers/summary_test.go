package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// ingestScripted is ingest with the scripted LLM as the extractor, so entities get the
// descriptions an LLM writes (the offline extractor writes none).
func ingestScripted(t *testing.T, llm *llmtest.Server, scope string) {
	db := neo4jtest.DB(t)
	opts := extract.OpenAIOptions{BaseURL: llm.BaseURL(), APIKey: "test", Model: "scripted", Timeout: 5 * time.Second,
		MaxConcurrency: 2, MaxRetries: 2, RetryBase: 5 * time.Millisecond, Dimensions: neo4jtest.Dimensions,
		Metrics: &extract.Metrics{}, Log: neo4jtest.Logger(t)}
	r := &extract.Runner{
		Queue: db, Extractor: extract.NewOpenAI(opts, extract.DefaultEntityTypes), Types: extract.DefaultEntityTypes,
		Resolver: &extract.Resolver{Know: db, Embedder: extract.Hashing{Dimensions: neo4jtest.Dimensions}, Now: time.Now},
		Workers:  1, Lease: time.Minute, MaxAttempts: 3, Backoff: 20 * time.Millisecond, Poll: neo4jtest.RunnerPoll,
		Log: neo4jtest.Logger(t), Metrics: &extract.Metrics{}, Scope: scope,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// summaryView is an entity as search, the facts routes and GET /v1/entities/{id} show it.
type summaryView struct {
	ID      string `json:"id"`
	GroupID string `json:"group_id"`
	Name    string `json:"name"`
	Summary string `json:"summary"`
}

// TestSummaries_FollowTheirMemories: a public memory's words reach an entity's summary
// (from the LLM's description of the entity and from a fact); once the memory is
// deleted, expires and is swept, has its content replaced, or is moved to its agent's
// private space, no requester (another one, nor the owner reading the public space)
// reads the words in the entity's summary, by id, in search results (the entity's or
// a fact's ends') or in the facts list, nor finds the entity by them; the words of
// the memory that keeps the entity are still there.
func TestSummaries_FollowTheirMemories(t *testing.T) {
	t.Parallel()
	var svc *service.Service
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) { svc = s })

	for _, c := range withdrawals(&svc, "Dana Reyes sorts old letters.") {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newTeamWorld(t, srv.URL, "sum")
			word := "quokka" + randomSuffix()
			llm := llmtest.New()
			t.Cleanup(llm.Close)
			person := func(summary string) map[string]any {
				return map[string]any{"name": "Dana Reyes", "type": "Person", "summary": summary}
			}
			llm.Answer("lives in Porto", map[string]any{
				"entities": []map[string]any{person("Lives by the sea."), {"name": "Porto", "type": "Location", "summary": "A city."}},
				"facts": []map[string]any{{"source": "Dana Reyes", "target": "Porto", "relation": "LIVES_IN",
					"fact": "Dana Reyes lives in Porto.", "valid_at": nil, "invalid_at": nil}},
			})
			llm.Answer("collects", map[string]any{
				"entities": []map[string]any{person("Collects " + word + " stamps."), {"name": "Acme", "type": "Organization", "summary": "Sells " + word + " stamps."}},
				"facts": []map[string]any{{"source": "Dana Reyes", "target": "Acme", "relation": "BUYS_FROM",
					"fact": "Dana Reyes buys " + word + " stamps from Acme.", "valid_at": nil, "invalid_at": nil}},
			})
			llm.Answer("sorts", map[string]any{"entities": []map[string]any{person("Sorts old letters.")}, "facts": []any{}})
			ingestScripted(t, llm, "agent-"+w.agent+"-")
			public := "agent-" + w.agent + "-public"

			add := func(text string, extra map[string]any) string {
				body := map[string]any{"agent_id": w.agent, "messages": text, "visibility": "public"}
				for k, v := range extra {
					body[k] = v
				}
				var a added
				w.owner.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
				waitStatus(t, w.owner, a.ID)
				return a.ID
			}
			add("Dana Reyes lives in Porto, a city by the sea.", nil)
			gone := add("Dana Reyes collects "+word+" stamps from Acme, which sells them.",
				map[string]any{"expires_at": time.Now().Add(time.Hour).Format(time.RFC3339Nano)})

			// Every entity a requester is shown on the routes that show summaries.
			type found struct {
				Entities []summaryView `json:"entities"`
				Facts    []struct {
					Source summaryView `json:"source"`
					Target summaryView `json:"target"`
				} `json:"facts"`
				Items []struct {
					Source summaryView `json:"source"`
					Target summaryView `json:"target"`
				} `json:"items"`
			}
			shown := func(as client, query string) []summaryView {
				var out []summaryView
				for _, r := range []struct{ method, path string }{
					{"POST", "/v1/memories/search"}, {"GET", "/v1/facts?limit=100&agent_id=" + w.agent},
				} {
					var f found
					var body any
					if r.method == "POST" {
						body = map[string]any{"agent_id": w.agent, "query": query}
					}
					as.must(http.StatusOK, r.method, r.path, body, &f)
					out = append(out, f.Entities...)
					for _, x := range append(f.Facts, f.Items...) {
						out = append(out, x.Source, x.Target)
					}
				}
				return out
			}
			var dana summaryView
			for _, e := range shown(w.other, "Dana Reyes "+word) {
				if e.Name == "Dana Reyes" && e.GroupID == public {
					dana = e
				}
			}
			if !strings.Contains(dana.Summary, word) {
				t.Fatalf("the setup did not put the word into Dana's public summary: %+v", dana)
			}

			c.drop(t, w, gone)
			if c.name == "update" || c.name == "private" {
				waitStatus(t, w.owner, gone) // extracted again, from its new content or in its new space
			}
			for _, as := range []client{w.other, w.owner} {
				var got summaryView
				as.must(http.StatusOK, "GET", "/v1/entities/"+dana.ID, nil, &got)
				if strings.Contains(got.Summary, word) {
					t.Errorf("%s reads Dana's public summary with the word: %q", as.requester, got.Summary)
				}
				if !strings.Contains(got.Summary, "Lives by the sea.") || !strings.Contains(got.Summary, "Dana Reyes lives in Porto.") {
					t.Errorf("%s reads Dana's public summary without the lasting memory's words: %q", as.requester, got.Summary)
				}
				for _, query := range []string{word, "Dana Reyes " + word} {
					for _, e := range shown(as, query) {
						if strings.Contains(strings.ToLower(e.Summary), word) && (e.GroupID == public || as == w.other) {
							t.Errorf("%s searching %q is shown %s of %s with the word: %q", as.requester, query, e.Name, e.GroupID, e.Summary)
						}
					}
				}
			}
			if status, out := w.other.do("POST", "/v1/memories/search", map[string]any{"agent_id": w.agent, "query": word}); status != http.StatusOK || strings.Contains(strings.ToLower(string(out)), word) {
				t.Errorf("another requester's search for the word answers %d %s", status, out)
			}
		})
	}
}

// withdrawal is one way an owner takes a public memory back from its readers.
type withdrawal struct {
	name string
	drop func(t *testing.T, w teamWorld, id string)
}

// withdrawals are the ways of taking a memory back: delete it, let it expire and sweep
// (with *svc, set once the server is built), replace its content with rewrite, move it
// to its agent's private space.
func withdrawals(svc **service.Service, rewrite string) []withdrawal {
	return []withdrawal{
		{"delete", func(t *testing.T, w teamWorld, id string) {
			w.owner.must(http.StatusNoContent, "DELETE", "/v1/memories/"+id, nil, nil)
		}},
		{"expire", func(t *testing.T, w teamWorld, id string) { expireAndSweep(t, w.owner, id, *svc) }},
		{"update", func(t *testing.T, w teamWorld, id string) {
			w.owner.must(http.StatusOK, "PATCH", "/v1/memories/"+id, map[string]any{"messages": rewrite}, nil)
		}},
		{"private", func(t *testing.T, w teamWorld, id string) {
			w.owner.must(http.StatusOK, "PATCH", "/v1/memories/"+id, map[string]any{"visibility": "private"}, nil)
		}},
	}
}

// expireAndSweep makes owner's memory id expire at once, waits until it reads as gone,
// and sweeps it as two memgate processes would.
func expireAndSweep(t *testing.T, owner client, id string, svc *service.Service) {
	t.Helper()
	// Far enough ahead that the PATCH reaches the service before it on a busy machine
	// (500 ms did not, once make test ran this package beside the others' start; 2 s
	// did not at a load of 30).
	soon := time.Now().Add(4 * time.Second)
	owner.must(http.StatusOK, "PATCH", "/v1/memories/"+id, map[string]any{"expires_at": soon.Format(time.RFC3339Nano)}, nil)
	waitNotFound(t, owner, id, "after it expired")
	sweepTwice(t, svc)
}

// waitNotFound polls memory id as c until c no longer reads it (404); why says what
// should have hidden it, for the failure after 10 s.
func waitNotFound(t *testing.T, c client, id, why string) {
	t.Helper()
	for deadline, wait := time.Now().Add(10*time.Second), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
		status, _ := c.do("GET", "/v1/memories/"+id, nil)
		if status == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still reads memory %s 10 s %s: %d", c.requester, id, why, status)
		}
	}
}
