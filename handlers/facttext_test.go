package handlers_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	memgate "github.com/memgate/memgate/client"
	"github.com/memgate/memgate/service"
)

// shownFact is a fact as the facts list and search show it.
type shownFact struct {
	ID       string      `json:"id"`
	GroupID  string      `json:"group_id"`
	Relation string      `json:"relation"`
	Fact     string      `json:"fact"`
	Source   summaryView `json:"source"`
	Target   summaryView `json:"target"`
	Episodes []string    `json:"episodes"`
}

// publicFacts is every fact of the agent's public space requester as reads in the facts
// list (every fact, whatever its time).
func publicFacts(as client, agent string) []shownFact {
	var page struct {
		Items []shownFact `json:"items"`
	}
	as.must(http.StatusOK, "GET", "/v1/facts?limit=100&agent_id="+agent, nil, &page)
	var out []shownFact
	for _, f := range page.Items {
		if f.GroupID == "agent-"+agent+"-public" {
			out = append(out, f)
		}
	}
	return out
}

// TestFacts_FollowTheirMemories: a fact carries the sentence of the first memory that
// stated it; a second public memory stating it again only adds itself to its support.
// When the first is deleted, expires and is swept, is rewritten, or moves to its
// agent's private space, no other requester reads its sentence (a secret word of it)
// in the facts list, an entity's summary, a search (expired facts included) or an
// export, nor the owner in the public space; the lasting memory is extracted again and
// its fact is found in its own words.
func TestFacts_FollowTheirMemories(t *testing.T) {
	t.Parallel()
	var svc *service.Service
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) { svc = s })

	for _, c := range withdrawals(&svc, "Zed0Q drinks green tea.") {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newTeamWorld(t, srv.URL, "ftx")
			ingest(t, "agent-"+w.agent+"-")
			secret := "xyzzy" + randomSuffix() + "plugh"
			lasting := "Zed0Q works at Acme0Works" // the offline extractor's fact of the lasting memory
			add := func(text string) string { return addPublic(t, w, text) }
			first := add("Zed0Q works at Acme0Works and " + secret + " is the bunker code word.")
			second := add(lasting + ".")
			export := func() string {
				var out bytes.Buffer
				if _, _, err := memgate.Export(context.Background(), memgate.New(srv.URL, matrixKeys["trusted"], w.other.requester), w.agent, &out); err != nil {
					t.Fatal(err)
				}
				return out.String()
			}

			var zed string
			for _, f := range publicFacts(w.other, w.agent) {
				if f.Relation == "WORKS_AT" && f.Source.Name == "Zed0Q" {
					zed = f.Source.ID
					if !strings.Contains(f.Fact, secret) || !slices.Equal(f.Episodes, []string{first, second}) {
						t.Fatalf("the setup did not make one fact of both memories in the first one's words: %+v", f)
					}
				}
			}
			if zed == "" || !strings.Contains(export(), secret) {
				t.Fatal("the setup's fact is not in the facts list or the export")
			}

			c.drop(t, w, first)
			if c.name == "update" || c.name == "private" {
				waitStatus(t, w.owner, first) // extracted again, from its new content or in its new space
			}
			waitStatus(t, w.owner, second) // extracted again, to state the fact in its own words

			for _, as := range []client{w.other, w.owner} {
				found := false
				for _, f := range publicFacts(as, w.agent) {
					if strings.Contains(f.Fact, secret) || strings.Contains(f.Source.Summary+f.Target.Summary, secret) {
						t.Errorf("%s reads the withdrawn sentence in the public facts: %+v", as.requester, f)
					}
					if f.Relation == "WORKS_AT" && f.Source.Name == "Zed0Q" {
						found = f.Fact == lasting && slices.Equal(f.Episodes, []string{second})
					}
				}
				if !found {
					t.Errorf("%s does not find the lasting memory's fact in its own words: %+v", as.requester, publicFacts(as, w.agent))
				}
				var got summaryView
				as.must(http.StatusOK, "GET", "/v1/entities/"+zed, nil, &got)
				if strings.Contains(got.Summary, secret) || !strings.Contains(got.Summary, lasting) {
					t.Errorf("%s reads Zed0Q's public summary %q", as.requester, got.Summary)
				}
			}
			for _, expired := range []bool{false, true} {
				for _, query := range []string{secret, "Zed0Q " + secret, "Zed0Q Acme0Works"} {
					status, out := w.other.do("POST", "/v1/memories/search",
						map[string]any{"agent_id": w.agent, "query": query, "include_expired": expired})
					if status != http.StatusOK || strings.Contains(string(out), secret) {
						t.Errorf("another requester's search for %q (include_expired %v) answers %d %s", query, expired, status, out)
					}
				}
			}
			if out := export(); strings.Contains(out, secret) || !strings.Contains(out, `"fact":"`+lasting+`"`) {
				t.Errorf("another requester's export: %s", out)
			}
		})
	}
}

// TestEntities_EndsOfRetiredFactsGo: a public memory names ZinniaDel0q only through a
// fact; rewritten, the fact is retired (expired, kept for history) and the memory no
// longer mentions her. When the memory is then deleted or moved to private, the
// retired fact goes, and so must ZinniaDel0q: no other requester finds her by id or by
// search.
func TestEntities_EndsOfRetiredFactsGo(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, matrixKeyring(), nil, func(*service.Service) {})
	for _, c := range withdrawals(nil, "") {
		if c.name != "delete" && c.name != "private" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newTeamWorld(t, srv.URL, "fte")
			ingest(t, "agent-"+w.agent+"-")
			var a added
			w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent,
				"messages": "Olo0 works at Marmot0. Olo0 knows ZinniaDel0q.", "visibility": "public"}, &a)
			waitStatus(t, w.owner, a.ID)
			w.owner.must(http.StatusOK, "PATCH", "/v1/memories/"+a.ID, map[string]any{"messages": "Olo0 works at Marmot0."}, nil)
			waitStatus(t, w.owner, a.ID)

			var zinnia string
			for _, f := range publicFacts(w.other, w.agent) {
				if f.Target.Name == "ZinniaDel0q" {
					zinnia = f.Target.ID
				}
			}
			if zinnia == "" {
				t.Fatalf("the setup left no retired fact naming ZinniaDel0q: %+v", publicFacts(w.other, w.agent))
			}
			w.other.must(http.StatusOK, "GET", "/v1/entities/"+zinnia, nil, nil)

			c.drop(t, w, a.ID)
			if c.name == "private" {
				waitStatus(t, w.owner, a.ID)
			}
			if status, out := w.other.do("GET", "/v1/entities/"+zinnia, nil); status != http.StatusNotFound {
				t.Errorf("another requester reads ZinniaDel0q after the memory went: %d %s", status, out)
			}
			for _, expired := range []bool{false, true} {
				status, out := w.other.do("POST", "/v1/memories/search",
					map[string]any{"agent_id": w.agent, "query": "ZinniaDel0q", "include_expired": expired})
				if status != http.StatusOK || strings.Contains(string(out), "ZinniaDel0q") {
					t.Errorf("another requester's search for ZinniaDel0q (include_expired %v) answers %d %s", expired, status, out)
				}
			}
		})
	}
}

// TestFacts_RestatedInTheirOwnWords: a fact retracted when the memory stating it was
// rewritten (expired, in the old content's words) and then stated again, by another
// memory or by the rewritten one itself, holds again in the words of what states it
// now: no requester reads the old content's words (a secret word of it) in a current
// fact, an entity's summary, a search or an export, and the fact cites only what
// states it.
func TestFacts_RestatedInTheirOwnWords(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, matrixKeyring(), nil, func(*service.Service) {})
	w := newTeamWorld(t, srv.URL, "frs")
	ingest(t, "agent-"+w.agent+"-")
	add := func(text string) string { return addPublic(t, w, text) }
	rewrite := func(id, text string) {
		w.owner.must(http.StatusOK, "PATCH", "/v1/memories/"+id, map[string]any{"messages": text}, nil)
		waitStatus(t, w.owner, id)
	}
	secret := "xyzzy" + randomSuffix() + "plugh"
	// By another memory: Zed0Q's fact is retracted, then a second memory states it.
	old := add("Zed0Q works at Acme0Works and " + secret + " is the bunker code word.")
	rewrite(old, "Zed0Q drinks green tea.")
	other := add("Zed0Q works at Acme0Works.")
	// By the same memory: Qix0's memory is rewritten to state its fact without the word.
	same := add("Qix0 works at Bolt0Corp and " + secret + " opens the vault.")
	rewrite(same, "Qix0 works at Bolt0Corp.")

	want := map[string]struct {
		fact string
		by   string
	}{"Zed0Q": {"Zed0Q works at Acme0Works", other}, "Qix0": {"Qix0 works at Bolt0Corp", same}}
	for _, as := range []client{w.other, w.owner} {
		for _, f := range publicFacts(as, w.agent) {
			if strings.Contains(f.Fact, secret) || strings.Contains(f.Source.Summary+f.Target.Summary, secret) {
				t.Errorf("%s reads the old content's words: %+v", as.requester, f)
			}
			if x, ok := want[f.Source.Name]; ok && f.Relation == "WORKS_AT" && (f.Fact != x.fact || !slices.Equal(f.Episodes, []string{x.by})) {
				t.Errorf("%s reads %s's fact as %q citing %v, want %q citing %s", as.requester, f.Source.Name, f.Fact, f.Episodes, x.fact, x.by)
			}
		}
	}
	for _, expired := range []bool{false, true} {
		status, out := w.other.do("POST", "/v1/memories/search",
			map[string]any{"agent_id": w.agent, "query": "Zed0Q Qix0 " + secret, "include_expired": expired})
		if status != http.StatusOK || strings.Contains(string(out), secret) {
			t.Errorf("another requester's search (include_expired %v) answers %d %s", expired, status, out)
		}
	}
	var out bytes.Buffer
	if _, _, err := memgate.Export(context.Background(), memgate.New(srv.URL, matrixKeys["trusted"], w.other.requester), w.agent, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), secret) {
		t.Errorf("another requester's export holds the old content's words: %s", out.String())
	}
}

// addPublic writes text as a public memory of w's agent and waits for its extraction.
func addPublic(t *testing.T, w teamWorld, text string) string {
	t.Helper()
	var a added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": text, "visibility": "public"}, &a)
	waitStatus(t, w.owner, a.ID)
	return a.ID
}
