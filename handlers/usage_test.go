package handlers_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// ingestMetered runs extraction over scope with the scripted LLM for chat and
// embeddings both, until the test ends.
func ingestMetered(t *testing.T, llm *llmtest.Server, scope string) {
	db := neo4jtest.DB(t)
	opts := extract.OpenAIOptions{BaseURL: llm.BaseURL(), APIKey: "test", Model: "scripted", Timeout: 5 * time.Second,
		MaxConcurrency: 2, MaxRetries: 2, RetryBase: 5 * time.Millisecond, Dimensions: neo4jtest.Dimensions,
		Metrics: &extract.Metrics{}, Log: neo4jtest.Logger(t)}
	r := &extract.Runner{
		Queue: db, Extractor: extract.NewOpenAI(opts, extract.DefaultEntityTypes), Types: extract.DefaultEntityTypes,
		Resolver: &extract.Resolver{Know: db, Embedder: extract.NewOpenAI(opts, nil), Now: time.Now},
		Workers:  1, Lease: time.Minute, MaxAttempts: 3, Backoff: 20 * time.Millisecond, Poll: neo4jtest.RunnerPoll,
		Log: neo4jtest.Logger(t), Metrics: &extract.Metrics{}, Scope: scope,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// costJSON is a memory's cost, and an agent's usage summed, as the API shows them.
type costJSON struct {
	ChatCalls        int64   `json:"chat_calls"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	EmbeddingCalls   int64   `json:"embedding_calls"`
	EmbeddingInputs  int64   `json:"embedding_inputs"`
	EmbeddingTokens  int64   `json:"embedding_tokens"`
	Seconds          float64 `json:"seconds"`
}

func (c costJSON) plus(o costJSON) costJSON {
	return costJSON{c.ChatCalls + o.ChatCalls, c.PromptTokens + o.PromptTokens, c.CompletionTokens + o.CompletionTokens,
		c.EmbeddingCalls + o.EmbeddingCalls, c.EmbeddingInputs + o.EmbeddingInputs, c.EmbeddingTokens + o.EmbeddingTokens,
		c.Seconds + o.Seconds}
}

// same reports whether a and b are equal, their seconds within a microsecond (sums of
// floats in another order).
func (c costJSON) same(o costJSON) bool {
	secs := math.Abs(c.Seconds-o.Seconds) < 1e-6
	c.Seconds, o.Seconds = 0, 0
	return c == o && secs
}

type usageJSON struct {
	AgentID  string     `json:"agent_id"`
	Since    *time.Time `json:"since"`
	Until    *time.Time `json:"until"`
	Memories int        `json:"memories"`
	Cost     costJSON   `json:"cost"`
}

// TestUsage_SumsTheAgentsMemories: with the scripted LLM reporting fixed usage, each
// extracted memory shows one chat call with its reported tokens and one embedding call
// with the texts it sent and their reported tokens (GET and the list alike), a memory
// stored without extraction nothing; every call the server answered is in some memory.
// GET /v1/agents/{id}/usage sums the memories of the agent's private and public spaces,
// for its owner and for an admin host, exactly: not its memory in a team's space, not
// another agent's of the same owner; since and until bound it by created_at (since
// inclusive, until exclusive) and are echoed.
func TestUsage_SumsTheAgentsMemories(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "use")
	second := "use-second-" + randomSuffix()
	neo4jtest.Forget(t, second)
	w.owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": second}, nil)
	llm := llmtest.New()
	t.Cleanup(llm.Close)
	const prompt, completion, perInput = 900, 40, 2
	llm.ReportUsage(prompt, completion, perInput)
	for _, scope := range []string{"agent-" + w.agent + "-", "agent-" + second + "-", "team-" + w.team} {
		ingestMetered(t, llm, scope)
	}

	write := func(body map[string]any) string {
		var a added
		w.owner.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
		return a.ID
	}
	private := write(map[string]any{"agent_id": w.agent, "visibility": "private", "messages": llm.Knows("Ida Marsh", "Joe Kent")})
	public := write(map[string]any{"agent_id": w.agent, "visibility": "public", "messages": llm.Knows("Kai Lund", "Lea Moss")})
	stored := write(map[string]any{"agent_id": w.agent, "visibility": "private", "messages": "Kept as it is.", "extract": false})
	team := write(map[string]any{"agent_id": w.agent, "visibility": "team", "team": w.team, "messages": llm.Knows("Max Nye", "Noa Orr")})
	other := write(map[string]any{"agent_id": second, "visibility": "private", "messages": llm.Knows("Oli Park", "Pia Quin")})

	costs := map[string]costJSON{}
	var all costJSON
	for _, id := range []string{private, public, stored, team, other} {
		waitStatus(t, w.owner, id)
		var m struct {
			CreatedAt time.Time `json:"created_at"`
			Cost      costJSON  `json:"cost"`
		}
		w.owner.must(http.StatusOK, "GET", "/v1/memories/"+id, nil, &m)
		costs[id] = m.Cost
		all = all.plus(m.Cost)
		c := m.Cost
		switch {
		case id == stored:
			if c != (costJSON{}) {
				t.Errorf("a memory stored without extraction costs %+v, want nothing", c)
			}
		case c.ChatCalls != 1 || c.PromptTokens != prompt || c.CompletionTokens != completion || c.EmbeddingCalls != 1 ||
			c.EmbeddingInputs < 3 || c.EmbeddingTokens != perInput*c.EmbeddingInputs || c.Seconds <= 0:
			t.Errorf("memory %s costs %+v, want 1 chat call of %d+%d tokens, 1 embedding call of its names and fact at %d tokens each, and time",
				id, c, prompt, completion, perInput)
		}
	}
	var reported costJSON // every call the scripted LLM answered, each in some memory
	for _, r := range llm.Requests() {
		reported.ChatCalls, reported.PromptTokens, reported.CompletionTokens = reported.ChatCalls+1,
			reported.PromptTokens+int64(r.PromptTokens), reported.CompletionTokens+int64(r.CompletionTokens)
	}
	for _, r := range llm.EmbeddingRequests() {
		reported.EmbeddingCalls, reported.EmbeddingInputs, reported.EmbeddingTokens = reported.EmbeddingCalls+1,
			reported.EmbeddingInputs+int64(r.Inputs), reported.EmbeddingTokens+int64(r.Tokens)
	}
	if reported.Seconds = all.Seconds; !all.same(reported) {
		t.Errorf("the memories cost %+v in all; the scripted LLM answered %+v", all, reported)
	}
	// The list shows each as GET does.
	for _, space := range []string{"private", "public"} {
		var page struct {
			Items []struct {
				ID   string   `json:"id"`
				Cost costJSON `json:"cost"`
			}
		}
		w.owner.must(http.StatusOK, "GET", "/v1/memories?agent_id="+w.agent+"&space="+space, nil, &page)
		for _, m := range page.Items {
			if m.Cost != costs[m.ID] {
				t.Errorf("the %s list shows %s costing %+v; GET %+v", space, m.ID, m.Cost, costs[m.ID])
			}
		}
	}

	own := costs[private].plus(costs[public]).plus(costs[stored])
	usage := func(c client, q url.Values) usageJSON {
		t.Helper()
		var u usageJSON
		c.must(http.StatusOK, "GET", "/v1/agents/"+w.agent+"/usage?"+q.Encode(), nil, &u)
		if u.AgentID != w.agent {
			t.Errorf("usage of %s names %s", w.agent, u.AgentID)
		}
		return u
	}
	for _, c := range []client{w.owner, w.admin} {
		if u := usage(c, nil); u.Memories != 3 || !u.Cost.same(own) || u.Since != nil || u.Until != nil {
			t.Errorf("usage for %s: %+v, want its 3 memories costing %+v", c.requester, u, own)
		}
	}
	var first struct {
		CreatedAt time.Time `json:"created_at"`
	}
	w.owner.must(http.StatusOK, "GET", "/v1/memories/"+private, nil, &first)
	at := first.CreatedAt.Format(time.RFC3339Nano)
	later := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	for _, c := range []struct {
		q        url.Values
		memories int
		cost     costJSON
	}{
		{url.Values{"since": {at}}, 3, own},
		{url.Values{"until": {at}}, 0, costJSON{}},
		{url.Values{"since": {at}, "until": {later.Format(time.RFC3339)}}, 3, own},
		{url.Values{"since": {later.Format(time.RFC3339)}}, 0, costJSON{}},
	} {
		u := usage(w.owner, c.q)
		if u.Memories != c.memories || !u.Cost.same(c.cost) {
			t.Errorf("usage ?%s: %d memories costing %+v, want %d costing %+v", c.q.Encode(), u.Memories, u.Cost, c.memories, c.cost)
		}
		for name, got := range map[string]*time.Time{"since": u.Since, "until": u.Until} {
			if want := c.q.Get(name); (want == "") != (got == nil) || (got != nil && !sameInstant(t, want, *got)) {
				t.Errorf("usage ?%s: %s %v, want %q", c.q.Encode(), name, got, want)
			}
		}
	}
}

func sameInstant(t *testing.T, text string, at time.Time) bool {
	want, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		t.Fatal(err)
	}
	return want.Equal(at)
}

// TestUsage_Refused: a window that is not RFC 3339, not since before until, empty,
// repeated or with an unknown parameter is 400 in the one error shape, naming the
// parameter; anyone but the owner and an admin host of the agent's organization gets
// 404, exactly as for an agent that does not exist: another requester, one the agent
// is shared with, its delegate, the owner's own id through another organization's key,
// and that organization's admin host.
func TestUsage_Refused(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "usr")
	as := func(who, key string) client {
		return client{t: t, base: srv.URL, key: matrixKeys[key], requester: who}
	}
	sharer, delegate := as("usr-share-"+randomSuffix(), "trusted"), as("usr-dele-"+randomSuffix(), "trusted")
	neo4jtest.Forget(t, sharer.requester) // their principals, which the grants below create
	neo4jtest.Forget(t, delegate.requester)
	w.owner.must(http.StatusNoContent, "PUT", "/v1/agents/"+w.agent+"/shares/"+sharer.requester, nil, nil)
	w.owner.must(http.StatusNoContent, "PUT", "/v1/agents/"+w.agent+"/delegates/"+delegate.requester, map[string]any{"role": "writer"}, nil)
	path := "/v1/agents/" + w.agent + "/usage"

	for _, c := range []struct{ query, mentions string }{
		{"since=yesterday", "since"},
		{"until=2026-02-30T00:00:00Z", "until"},
		{"since=2026-01-01", "since"},
		{"since=2026-05-01T00:00:00Z&until=2026-04-01T00:00:00Z", "since must be before until"},
		{"since=2026-05-01T00:00:00Z&until=2026-05-01T00:00:00Z", "since must be before until"},
		{"since=", "since"},
		{"since=2026-05-01T00:00:00Z&since=2026-06-01T00:00:00Z", "since"},
		{"from=2026-05-01T00:00:00Z", "from"},
	} {
		status, out := w.owner.sendMalformed("GET", path+"?"+c.query, nil)
		var e struct {
			Error struct{ Code, Message, RequestID string } `json:"error"`
		}
		if err := json.Unmarshal(out, &e); err != nil || status != http.StatusBadRequest || e.Error.Code != "invalid" ||
			!strings.Contains(e.Error.Message, c.mentions) {
			t.Errorf("?%s: %d %s, want 400 invalid naming %q", c.query, status, out, c.mentions)
		}
	}

	ghost := "/v1/agents/usr-ghost-" + randomSuffix() + "/usage"
	status, want := w.owner.do("GET", ghost, nil)
	if status != http.StatusNotFound {
		t.Fatalf("usage of an agent that does not exist: %d %s", status, want)
	}
	for name, c := range map[string]client{
		"another requester": w.other, "a share holder": sharer, "a delegate": delegate,
		"the owner's id in another organization": as(w.owner.requester, "globex_trusted"),
		"another organization's admin host":      as("root", "globex_admin"),
	} {
		status, out := c.do("GET", path, nil)
		if status != http.StatusNotFound || !sameError(out, want) {
			t.Errorf("%s: %d %s; want 404 as for an agent that does not exist: %s", name, status, out, want)
		}
	}
	for _, c := range []client{w.owner, w.admin} {
		c.must(http.StatusOK, "GET", path, nil, nil)
	}
}

// sameError reports whether two error answers say the same but for their request ids.
func sameError(a, b []byte) bool {
	var x, y struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return x.Error == y.Error
}
