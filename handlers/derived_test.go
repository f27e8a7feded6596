package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestDerived_OnlyTheAgentsOwnWords: compaction and reflection draw only on what the
// agent's owner wrote for it, and a derived memory moves only as its sources would.
// A team's words (another member's memory and the fact extracted from it), a
// delegate's words in the agent's own private space, a team memory of the agent that
// another member rewrote, and what a host asserts a team membership for, never reach
// a summary or a rule; naming such a memory to compact is an audited 403. A member who
// reflects, leaves the team and publishes its summary publishes only its own words. A
// derived memory that holds other words (as one written before this rule), or whose
// sources are gone, is refused a move out of the private space and a promotion.
func TestDerived_OnlyTheAgentsOwnWords(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "drv")
	suffix := strings.TrimPrefix(w.agent, "drv-agent-")
	word := func(name string) string { return name + strings.ToUpper(suffix[:1]) + suffix[1:] }
	teamWord, delegateWord, rewrittenWord, assertedWord := word("Pelican"), word("Delegata"), word("Rewritten"), word("Asserted")
	foreign := []string{teamWord, delegateWord, rewrittenWord, assertedWord}
	ingest(t, "agent-"+w.agent+"-", "team-"+w.team, "agent-drv-")

	member, dan := w.other, client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: "drv-dan-" + suffix}
	w.admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+w.team+"/members/"+member.requester, map[string]any{"role": "writer"}, nil)
	memberAgent := "drv-member-" + suffix
	member.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": memberAgent}, nil)
	w.owner.must(http.StatusNoContent, "PUT", "/v1/agents/"+w.agent+"/delegates/"+dan.requester, map[string]any{"role": "writer"}, nil)
	start := time.Now().UTC().Add(-time.Second)

	// The team's words: another member's memory, with a fact the pipeline extracts.
	var theirs, mine, rewritten added
	member.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": memberAgent, "visibility": "team", "team": w.team,
		"messages": "Quinn Abara works at " + teamWord + " Labs."}, &theirs)
	// A delegate's words in the agent's own private space.
	delegated := write(dan, w.agent, "private", "Dan noted the vault word "+delegateWord+".")
	// A team memory of the agent that another member rewrote.
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "visibility": "team", "team": w.team,
		"messages": "Release on Friday."}, &rewritten)
	if s, body := member.patch(rewritten.ID, "", map[string]any{"messages": "Release code " + rewrittenWord + "."}); s != http.StatusOK {
		t.Fatalf("the other member rewriting the agent's team memory: %d %s", s, body)
	}
	// The owner's own words.
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "I plan the offsite in Lisbon; never book before 9."}, &mine)
	for _, id := range []string{theirs.ID, mine.ID, rewritten.ID} {
		waitStatus(t, w.owner, id)
	}
	waitStatus(t, w.owner, delegated)
	var facts struct{ Items []struct{ Fact string } }
	w.owner.must(http.StatusOK, "GET", "/v1/facts?agent_id="+w.agent, nil, &facts)
	if !strings.Contains(mustJSON(t, facts), teamWord) {
		t.Fatalf("the owner's view holds no fact of the team's memory (%+v): the test would prove nothing", facts.Items)
	}

	type derived struct {
		ID          string   `json:"id"`
		Content     string   `json:"content"`
		DerivedFrom []string `json:"derived_from"`
	}
	leaks := func(what string, ds ...derived) {
		t.Helper()
		for _, d := range ds {
			for _, f := range foreign {
				if strings.Contains(d.Content, f) {
					t.Errorf("%s %s holds %q: %q", what, d.ID, f, d.Content)
				}
			}
			if strings.Join(d.DerivedFrom, ",") != mine.ID {
				t.Errorf("%s %s is derived from %v, want the owner's one memory %s", what, d.ID, d.DerivedFrom, mine.ID)
			}
		}
	}
	var compaction derived
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "since": start}, &compaction)
	leaks("the compaction", compaction)
	var reflection struct{ Memories []derived }
	w.owner.must(http.StatusAccepted, "POST", "/v1/agents/"+w.agent+"/reflect", map[string]any{"since": start}, &reflection)
	if len(reflection.Memories) == 0 || !strings.Contains(reflection.Memories[0].Content, "Lisbon") {
		t.Fatalf("reflection %+v: want a summary of the owner's memory", reflection.Memories)
	}
	leaks("the reflection's memory", reflection.Memories...)
	for name, id := range map[string]string{"rewritten": rewritten.ID, "delegated": delegated} {
		status, body := w.owner.do("POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "episode_ids": []string{mine.ID, id}})
		if status != http.StatusForbidden || strings.Contains(string(body), rewrittenWord) || strings.Contains(string(body), delegateWord) {
			t.Errorf("compacting the %s memory by name: %d %s, want 403", name, status, body)
		}
		if denied := audited(w.owner, "namespace_denied", id); len(denied) != 1 || denied[0].Actor != w.owner.requester {
			t.Errorf("denials about the %s memory: %+v, want the compaction's", name, denied)
		}
	}

	// A host asserting the team for one request: a requester outside the team, whose
	// agent holds one memory of its own, reflects with the team's words in view.
	nina := client{t: t, base: srv.URL, key: matrixKeys["asserting"], requester: "drv-nina-" + suffix, teams: w.team + ":writer"}
	ninaAgent := "drv-nina-agent-" + suffix
	nina.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": ninaAgent}, nil)
	var asserted added
	nina.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": ninaAgent, "visibility": "team", "team": w.team,
		"messages": "Tilde Okafor works at " + assertedWord + " Works."}, &asserted)
	member.must(http.StatusOK, "GET", "/v1/memories/"+asserted.ID, nil, nil)
	if s, body := member.patch(asserted.ID, "", map[string]any{"messages": "Tilde Okafor works at " + assertedWord + " Works, says the team."}); s != http.StatusOK {
		t.Fatalf("the member rewriting the asserted writer's memory: %d %s", s, body)
	}
	var ninaOwn added
	nina.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": ninaAgent, "messages": "I moved to Porto."}, &ninaOwn)
	waitStatus(t, nina, ninaOwn.ID)
	var ninas struct{ Memories []derived }
	nina.must(http.StatusAccepted, "POST", "/v1/agents/"+ninaAgent+"/reflect", map[string]any{"since": start}, &ninas)
	for _, d := range ninas.Memories {
		for _, f := range append(foreign, "Quinn Abara") {
			if strings.Contains(d.Content, f) {
				t.Errorf("a reflection with the team asserted holds %q: %q", f, d.Content)
			}
		}
		if strings.Join(d.DerivedFrom, ",") != ninaOwn.ID {
			t.Errorf("a reflection with the team asserted is derived from %v, want %s alone", d.DerivedFrom, ninaOwn.ID)
		}
	}

	// The owner leaves the team and publishes its reflection: its own words, moved.
	w.admin.must(http.StatusNoContent, "DELETE", "/v1/teams/"+w.team+"/members/"+w.owner.requester, nil, nil)
	if s, body := w.owner.patch(reflection.Memories[0].ID, "", map[string]any{"visibility": "public"}); s != http.StatusOK {
		t.Errorf("publishing the reflection of the agent's own words: %d %s", s, body)
	}
	stranger := client{t: t, base: srv.URL, key: matrixKeys["trusted"], requester: "drv-stranger-" + suffix}
	var page struct{ Items []derived }
	stranger.must(http.StatusOK, "GET", "/v1/memories?agent_id="+w.agent, nil, &page)
	if len(page.Items) != 1 {
		t.Errorf("another requester lists %d of the agent's memories, want the published reflection", len(page.Items))
	}
	for _, f := range foreign {
		if strings.Contains(mustJSON(t, page), f) {
			t.Errorf("another requester reads %q in the agent's public memories", f)
		}
	}

	// Derived memories as memgate wrote them before this rule: the owner's words
	// replaced by the team's, or derived from memories since gone.
	uri := neo4jtest.URI(t)
	var legacy, orphan derived
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "episode_ids": []string{mine.ID}}, &legacy)
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "episode_ids": []string{mine.ID}}, &orphan)
	for id, from := range map[string]string{legacy.ID: theirs.ID, orphan.ID: "00000000-0000-4000-8000-000000000001"} {
		if err := neo4jtest.Run(uri, `MATCH (e:Episodic {uuid: $id}) SET e.derived_from = [$from], e.content = $content`,
			map[string]any{"id": id, "from": from, "content": "Quinn Abara works at " + teamWord + " Labs."}); err != nil {
			t.Fatal(err)
		}
	}
	// A compaction of a compaction: its lineage is judged to the first memory.
	var source added
	var first, second derived
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "A note to forget."}, &source)
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "episode_ids": []string{source.ID}}, &first)
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "episode_ids": []string{first.ID}}, &second)
	w.owner.must(http.StatusNoContent, "DELETE", "/v1/memories/"+source.ID, nil, nil)
	for _, id := range []string{first.ID, second.ID} {
		if s, body := w.owner.patch(id, "", map[string]any{"visibility": "public"}); s != http.StatusForbidden {
			t.Errorf("publishing a derived memory whose first source is gone (%s): %d %s, want 403", id, s, body)
		}
	}
	w.admin.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": w.team + "-b"}, nil)
	w.admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+w.team+"-b/members/"+w.owner.requester, map[string]any{"role": "writer"}, nil)
	for name, id := range map[string]string{"holding a team's words": legacy.ID, "whose source is gone": orphan.ID} {
		if s, body := w.owner.patch(id, "", map[string]any{"visibility": "public"}); s != http.StatusForbidden {
			t.Errorf("publishing a derived memory %s: %d %s, want 403", name, s, body)
		}
		if s, body := w.owner.do("POST", "/v1/memories/"+id+"/promote", map[string]any{"target": "team:" + w.team + "-b"}); s != http.StatusForbidden {
			t.Errorf("promoting a derived memory %s: %d %s, want 403", name, s, body)
		}
		if denied := audited(w.owner, "namespace_denied", id); len(denied) != 2 {
			t.Errorf("denials about the derived memory %s: %+v, want the move's and the promotion's", name, denied)
		}
	}
	// A promotion copies out of the private space only the agent's own words, as a
	// move does: not the delegate's.
	if s, body := w.owner.do("POST", "/v1/memories/"+delegated+"/promote", map[string]any{"target": "team:" + w.team + "-b"}); s != http.StatusForbidden {
		t.Errorf("promoting the delegate's private memory: %d %s, want 403", s, body)
	}
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/"+mine.ID+"/promote", map[string]any{"target": "team:" + w.team + "-b"}, nil)

	// What a derived memory says is kept no longer than the first of its sources.
	soon, later := time.Now().UTC().Add(time.Hour).Truncate(time.Second), time.Now().UTC().Add(48*time.Hour).Truncate(time.Second)
	var expiring, lasting added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "A passing note.", "expires_at": soon}, &expiring)
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "A longer note.", "expires_at": later}, &lasting)
	var summary derived
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "episode_ids": []string{lasting.ID, expiring.ID}}, &summary)
	var got struct {
		ExpiresAt *time.Time `json:"expires_at"`
	}
	w.owner.must(http.StatusOK, "GET", "/v1/memories/"+summary.ID, nil, &got)
	if got.ExpiresAt == nil || !got.ExpiresAt.Equal(soon) {
		t.Errorf("the compaction of memories expiring at %v and %v expires at %v, want the first", soon, later, got.ExpiresAt)
	}
	for name, at := range map[string]any{"later than its first source": later, "never": nil} {
		if s, body := w.owner.patch(summary.ID, "", map[string]any{"expires_at": at}); s != http.StatusBadRequest {
			t.Errorf("the compaction's expiry set to %s: %d %s, want 400", name, s, body)
		}
	}
	w.owner.must(http.StatusOK, "PATCH", "/v1/memories/"+summary.ID, map[string]any{"expires_at": soon.Add(-time.Minute)}, nil)
	// One whose source is gone may still be given an expiry.
	w.owner.must(http.StatusOK, "PATCH", "/v1/memories/"+first.ID, map[string]any{"expires_at": later}, nil)
	// A source given an expiry after the fact takes what was derived from it along,
	// to the memories derived from those.
	var kept added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "A note kept for now."}, &kept)
	var once, twice derived
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "episode_ids": []string{kept.ID}}, &once)
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "episode_ids": []string{once.ID}}, &twice)
	w.owner.must(http.StatusOK, "PATCH", "/v1/memories/"+kept.ID, map[string]any{"expires_at": soon}, nil)
	for _, id := range []string{once.ID, twice.ID} {
		got.ExpiresAt = nil
		w.owner.must(http.StatusOK, "GET", "/v1/memories/"+id, nil, &got)
		if got.ExpiresAt == nil || !got.ExpiresAt.Equal(soon) {
			t.Errorf("memory %s, derived from one now expiring at %v, expires at %v", id, soon, got.ExpiresAt)
		}
	}
}

// TestDissolve_AfterTransfer: a team memory goes back, when the team is dissolved, only
// to an agent whose owner then is the owner who wrote it: an agent given to another
// owner does not bring its former owner's team words to the new one.
func TestDissolve_AfterTransfer(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "dxf")
	kept, given := w.agent, w.agent+"-given"
	w.owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": given}, nil)
	word := "Transferra" + randomSuffix()
	var stays, goes added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": kept, "visibility": "team", "team": w.team,
		"messages": "Kept agent's note."}, &stays)
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": given, "visibility": "team", "team": w.team,
		"messages": "The former owner's plan " + word + "."}, &goes)
	w.owner.must(http.StatusNoContent, "PUT", "/v1/agents/"+given+"/owner", map[string]any{"owner_id": w.other.requester}, nil)
	var d struct {
		Moved, Erased int
		Creators      []struct {
			AgentID  string `json:"agent_id"`
			Memories int
		}
	}
	w.admin.must(http.StatusOK, "DELETE", "/v1/teams/"+w.team, nil, &d)
	if d.Moved != 1 || d.Erased != 1 || len(d.Creators) != 1 || d.Creators[0].AgentID != kept {
		t.Errorf("dissolution %+v: want the kept agent's memory back home, the given agent's erased", d)
	}
	w.owner.must(http.StatusOK, "GET", "/v1/memories/"+stays.ID, nil, nil)
	if s, _ := w.other.do("GET", "/v1/memories/"+goes.ID, nil); s != http.StatusNotFound {
		t.Errorf("the new owner reads its agent's former owner's team memory after the dissolution: %d", s)
	}
	var page struct{ Items []memory }
	w.other.must(http.StatusOK, "GET", "/v1/memories?agent_id="+given, nil, &page)
	if strings.Contains(mustJSON(t, page), word) {
		t.Errorf("the new owner's agent holds its former owner's team words: %+v", page.Items)
	}
}
