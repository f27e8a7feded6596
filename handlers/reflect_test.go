package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// TestReflect: the owner's reflection on its agent's memories since a time is a
// summary and the rules among them, kept in the agent's private space with
// provenance, within max_tokens; earlier reflections are not read again; a decoy of
// another owner's agent never reaches it. Another requester may not reflect on the
// agent (403, audited); a ghost agent is 404; bad bounds are 400.
func TestReflect(t *testing.T) {
	t.Parallel()
	owner, other, agent, otherAgent, start := decoyWorld(t)
	var ids []string
	for _, text := range []string{
		"Priya Natarajan (user): I'm a data engineer at Halvorsen Logistics in Oslo.",
		"Priya Natarajan (user): I'm allergic to shellfish, so never book seafood places.\nassistant: Noted!",
		"Priya Natarajan (user): As of June 2025 I work at Nordvik Energy.",
	} {
		var a added
		owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": text}, &a)
		ids = append(ids, a.ID)
	}
	const decoy = "Quibblewort77Decoy"
	other.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": otherAgent,
		"messages": "I never share the code word " + decoy + "."}, nil)

	var got struct{ Memories []compacted }
	owner.must(http.StatusAccepted, "POST", "/v1/agents/"+agent+"/reflect", map[string]any{"since": start, "max_tokens": 400}, &got)
	if len(got.Memories) != 2 {
		t.Fatalf("reflection: %+v, want a summary and one rule", got.Memories)
	}
	size := 0
	for _, m := range got.Memories {
		size += len(m.Content)
		if m.GroupID != "agent-"+agent+"-private" || m.SourceDescription != "reflection" || strings.Join(m.DerivedFrom, ",") != strings.Join(ids, ",") ||
			strings.Contains(m.Content, decoy) || strings.Contains(m.Content, "Noted") {
			t.Errorf("reflection memory %+v: want the private space, source reflection, derived from the three, no decoy or assistant line", m)
		}
		var stored compacted
		owner.must(http.StatusOK, "GET", "/v1/memories/"+m.ID, nil, &stored)
		if stored.Content != m.Content {
			t.Errorf("stored %q, answered %q", stored.Content, m.Content)
		}
	}
	if summary, rule := got.Memories[0].Content, got.Memories[1].Content; size > 400 || !strings.Contains(summary, "Nordvik Energy") ||
		!strings.Contains(rule, "allergic to shellfish") {
		t.Errorf("summary %q and rule %q (%d bytes): want the new job in the summary, the allergy as the rule, within 400", summary, rule, size)
	}
	// A second reflection reads the same three memories, not the first reflection.
	var again struct{ Memories []compacted }
	owner.must(http.StatusAccepted, "POST", "/v1/agents/"+agent+"/reflect", map[string]any{"since": start}, &again)
	if len(again.Memories) == 0 || strings.Join(again.Memories[0].DerivedFrom, ",") != strings.Join(ids, ",") {
		t.Errorf("second reflection derived from %v, want the three memories only", again.Memories)
	}

	other.must(http.StatusForbidden, "POST", "/v1/agents/"+agent+"/reflect", map[string]any{"since": start}, nil)
	if denied := audited(owner, "namespace_denied", agent); len(denied) != 1 || denied[0].Actor != other.requester {
		t.Errorf("denials about the agent: %+v, want the other requester's reflection", denied)
	}
	owner.must(http.StatusNotFound, "POST", "/v1/agents/"+agent+"-ghost/reflect", map[string]any{}, nil)
	for name, body := range map[string]map[string]any{
		"max_tokens too small": {"max_tokens": 8},
		"nothing since":        {"since": time.Now().Add(time.Hour)},
		"unknown field":        {"agent_id": otherAgent},
	} {
		if status, out := owner.sendMalformed("POST", "/v1/agents/"+agent+"/reflect", body); status != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", name, status, out)
		}
	}
	session := mcpSession(t, owner.base, matrixKeys["trusted"], owner.requester)
	var viaMCP struct{ Memories []compacted }
	if !callTool(t, session, "reflect", map[string]any{"agent_id": agent, "since": start}, &viaMCP) || len(viaMCP.Memories) != 2 {
		t.Errorf("MCP reflect: %+v", viaMCP)
	}
}

// TestLifecycle_ScriptedLLM: compaction and reflection through REST on the OpenAI path
// (the scripted server): one chat call each, the model's summary and rules stored as
// it wrote them, the memories it was shown only the agent's.
func TestLifecycle_ScriptedLLM(t *testing.T) {
	t.Parallel()
	llm := llmtest.New()
	t.Cleanup(llm.Close)
	model := extract.NewOpenAI(extract.OpenAIOptions{BaseURL: llm.BaseURL(), APIKey: "test", Model: "scripted",
		Timeout: 5 * time.Second, MaxConcurrency: 1, MaxRetries: 1, Metrics: &extract.Metrics{}}, extract.DefaultEntityTypes)
	srv := newServerWith(t, nil, nil, func(s *service.Service) { s.Summarizer = model })
	w := &world{base: srv.URL, t: t, suffix: randomSuffix()}
	neo4jtest.Forget(t, w.suffix)
	owner, agent := w.as("owner", "trusted"), w.id("agent")
	owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	start := time.Now().UTC().Add(-time.Second)
	owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent,
		"messages": "Dana (user): I moved to Porto; I never take calls before 9."}, nil)
	llm.Answer("before 9", map[string]any{"summary": "Dana lives in Porto.", "rules": []string{"No calls for Dana before 9."}})

	var c compacted
	owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": agent, "since": start}, &c)
	var r struct{ Memories []compacted }
	owner.must(http.StatusAccepted, "POST", "/v1/agents/"+agent+"/reflect", map[string]any{"since": start}, &r)
	if c.Content != "Dana lives in Porto." || len(r.Memories) != 2 || r.Memories[0].Content != "Dana lives in Porto." ||
		r.Memories[1].Content != "No calls for Dana before 9." {
		t.Errorf("compaction %q, reflection %+v: want the model's summary and rule", c.Content, r.Memories)
	}
	prompts := llm.Prompts()
	if n := llm.ChatCalls.Load(); n != 2 || len(prompts) != 2 {
		t.Fatalf("%d chat calls, want one per compaction and reflection", n)
	}
	for _, p := range prompts {
		if !strings.Contains(p, "I moved to Porto") || strings.Count(p, "<memory>") != 1 {
			t.Errorf("the model was shown %q, want the agent's one memory", p)
		}
	}
}
