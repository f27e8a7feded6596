package handlers_test

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// The tests of this file are the security review's findings about data that moves
// between spaces after the route's check (issue 30): team dissolution, promoted
// copies, moves, versions and erasure.

// storedWith counts the memories and versions, anywhere in the graph, whose content
// holds text, and those of them in group.
func storedWith(t *testing.T, text, group string) (anywhere, there int64) {
	t.Helper()
	params := map[string]any{"text": text, "g": group}
	anywhere = neo4jtest.Count(t, "MATCH (n) WHERE (n:Episodic OR n:MemoryVersion) AND n.content CONTAINS $text RETURN count(n)", params)
	there = neo4jtest.Count(t, "MATCH (n) WHERE (n:Episodic OR n:MemoryVersion) AND n.content CONTAINS $text AND n.group_id = $g RETURN count(n)", params)
	return anywhere, there
}

// privateCount is how many memories agent's private space lists for its owner c.
func privateCount(c client, agent string) int {
	var list struct{ Items []memory }
	c.must(http.StatusOK, "GET", "/v1/memories?agent_id="+agent+"&space=private", nil, &list)
	return len(list.Items)
}

// TestDissolve_OnlyTheAgentsOwnWordsGoHome (finding 1): a promoted copy belongs to its
// promoter and a memory another writer changed is no longer its agent's own (even
// after its owner rewrote it: what the other wrote stays in its versions), so neither
// goes back to the agent's private space when the team is dissolved: they are
// erased. A memory only its owner wrote goes back. And the creator of the original
// cannot pull a promoter's edited copy into its own spaces with a move.
func TestDissolve_OnlyTheAgentsOwnWordsGoHome(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "home")
	alice, bob := w.owner, w.other
	team := "home-bob-" + w.team
	w.admin.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team, "owner_id": bob.requester}, nil)
	for _, who := range []string{alice.requester, bob.requester} {
		w.admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+who, map[string]any{"role": "writer"}, nil)
	}
	w.admin.must(http.StatusNoContent, "PUT", "/v1/promoters/"+bob.requester, nil, nil)
	private := "agent-" + w.agent + "-private"
	write := func(text, visibility string) string {
		var a added
		body := map[string]any{"agent_id": w.agent, "messages": text, "visibility": visibility}
		if visibility == "team" {
			body["team"] = team
		}
		alice.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
		return a.ID
	}
	edit := func(as client, id, text string) {
		t.Helper()
		if s, body := as.patch(id, "", map[string]any{"messages": text}); s != http.StatusOK {
			t.Fatalf("%s editing %s: %d %s", as.requester, id, s, body)
		}
	}

	// bob promotes alice's public memory into his team and into global, and rewrites
	// both copies.
	original := write("Alice likes green tea.", "public")
	var toTeam, toGlobal memory
	bob.must(http.StatusAccepted, "POST", "/v1/memories/"+original+"/promote", map[string]any{"target": "team:" + team}, &toTeam)
	bob.must(http.StatusAccepted, "POST", "/v1/memories/"+original+"/promote", map[string]any{"target": "global"}, &toGlobal)
	edit(bob, toTeam.ID, "Planted by bob in the team copy.")
	edit(bob, toGlobal.ID, "Planted by bob in the global copy.")
	// alice's team memory that bob rewrote, and one bob rewrote and alice wrote again.
	rewritten := write("Alice's team note.", "team")
	edit(bob, rewritten, "Planted by bob in alice's team note.")
	restored := write("Alice's second note.", "team")
	edit(bob, restored, "Planted by bob, then overwritten.")
	edit(alice, restored, "Alice's second note, as she wrote it again.")
	own := write("Alice's own team note.", "team")

	// Neither copy nor the rewritten note can be moved into alice's spaces by alice.
	for _, id := range []string{toGlobal.ID, toTeam.ID, rewritten} {
		if s, body := alice.patch(id, "", map[string]any{"visibility": "private"}); s != http.StatusForbidden {
			t.Errorf("alice moving %s (not her agent's own words) to its private space: %d %s, want 403", id, s, body)
		}
	}

	var d dissolution
	bob.must(http.StatusOK, "DELETE", "/v1/teams/"+team, nil, &d)
	if d.Moved != 1 || d.Erased != 3 {
		t.Errorf("dissolution: %+v, want alice's own note moved and the copy and the two notes bob rewrote erased", d)
	}
	for _, planted := range []string{"Planted by bob in the team copy", "Planted by bob in alice's team note", "Planted by bob, then overwritten"} {
		if anywhere, _ := storedWith(t, planted, ""); anywhere != 0 {
			t.Errorf("%q is still stored (%d memories or versions) after the dissolution", planted, anywhere)
		}
	}
	for _, id := range []string{toTeam.ID, rewritten, restored} {
		if s, _ := alice.do("GET", "/v1/memories/"+id, nil); s != http.StatusNotFound {
			t.Errorf("alice reads %s after the dissolution: %d, want 404 (erased)", id, s)
		}
	}
	var m memory
	alice.must(http.StatusOK, "GET", "/v1/memories/"+own, nil, &m)
	if m.GroupID != private {
		t.Errorf("alice's own note is in %s, want %s", m.GroupID, private)
	}
	// The global copy stays bob's, in global, and the original is untouched.
	var g memory
	alice.must(http.StatusOK, "GET", "/v1/memories/"+toGlobal.ID, nil, &g)
	if g.GroupID != "global" {
		t.Errorf("the global copy is in %s", g.GroupID)
	}
	if _, inPrivate := storedWith(t, "Planted by bob", private); inPrivate != 0 {
		t.Errorf("%d of bob's texts are in alice's private space", inPrivate)
	}
	if n := privateCount(alice, w.agent); n != 1 {
		t.Errorf("alice's private space holds %d memories, want her own note", n)
	}
}

// TestErase_TeamMemoriesNeverReachANewAgent (finding 2, and erasure's versions from
// finding 6): an erased agent's team memories stay in the team, no longer its
// agent's own; a dissolution after someone else created an agent with the same id
// erases them instead of handing them to it. The erased agent's own spaces leave no
// version behind.
func TestErase_TeamMemoriesNeverReachANewAgent(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "reuse")
	alice, mallory := w.owner, w.other
	var inTeam, private added
	alice.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent,
		"messages": "The team's deploy key rotates on Mondays.", "visibility": "team", "team": w.team}, &inTeam)
	alice.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "first draft"}, &private)
	if s, body := alice.patch(private.ID, "", map[string]any{"messages": "second draft"}); s != http.StatusOK {
		t.Fatalf("updating: %d %s", s, body)
	}

	alice.must(http.StatusOK, "DELETE", "/v1/agents/"+w.agent, nil, nil)
	if n := neo4jtest.Count(t, "MATCH (v:MemoryVersion {episode_uuid: $id}) RETURN count(v)", map[string]any{"id": private.ID}); n != 0 {
		t.Errorf("the erased agent's memory left %d versions", n)
	}
	// The team memory stays for the team.
	alice.must(http.StatusOK, "GET", "/v1/memories/"+inTeam.ID, nil, nil)

	mallory.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": w.agent}, nil)
	var d dissolution
	w.admin.must(http.StatusOK, "DELETE", "/v1/teams/"+w.team, nil, &d)
	if d.Moved != 0 || d.Erased != 1 {
		t.Errorf("dissolution: %+v, want the erased agent's memory erased", d)
	}
	if anywhere, _ := storedWith(t, "deploy key rotates", ""); anywhere != 0 {
		t.Errorf("the erased agent's team memory is still stored (%d)", anywhere)
	}
	if n := privateCount(mallory, w.agent); n != 0 {
		t.Errorf("the new agent's private space holds %d memories of the erased one", n)
	}
}

// TestMove_RacesDissolutionAndErasure (finding 3): a move into a team's space racing
// its dissolution, and a move into an agent's space racing its erasure, either land
// before (and go with the team or the agent) or answer 404; no memory is left in a
// space whose team or agent is gone. raceRounds rounds each.
func TestMove_RacesDissolutionAndErasure(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "race")
	orphans := func(group string) int64 {
		return neo4jtest.Count(t, "MATCH (n) WHERE (n:Episodic OR n:MemoryVersion) AND n.group_id = $g RETURN count(n)", map[string]any{"g": group})
	}
	race := func(a, b func() (int, []byte)) (int, int) {
		var sa, sb int
		var wg sync.WaitGroup
		wg.Go(func() { sa, _ = a() })
		wg.Go(func() { sb, _ = b() })
		wg.Wait()
		return sa, sb
	}
	var mu sync.Mutex
	outcomes := map[string]int{}
	count := func(outcome string) {
		mu.Lock()
		defer mu.Unlock()
		outcomes[outcome]++
	}
	raceOnce := func(round int) {
		// Into a team being dissolved.
		team := fmt.Sprintf("%s-%d", w.team, round)
		w.admin.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
		w.admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+w.owner.requester, map[string]any{"role": "writer"}, nil)
		var a added
		w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "moving into a team"}, &a)
		moved, dissolved := race(
			func() (int, []byte) {
				return w.owner.patch(a.ID, "", map[string]any{"visibility": "team", "team": team})
			},
			func() (int, []byte) { return w.admin.do("DELETE", "/v1/teams/"+team, nil) })
		count(fmt.Sprintf("team move %d, dissolve %d", moved, dissolved))
		if n := orphans("team-" + team); n != 0 {
			t.Errorf("round %d: %d nodes left in the dissolved team's space (move %d, dissolution %d)", round, n, moved, dissolved)
		}

		// Into an agent being erased.
		agent := fmt.Sprintf("%s-%d", w.agent, round)
		w.owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
		w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "moving out of a team",
			"visibility": "team", "team": w.team}, &a)
		moved, erased := race(
			func() (int, []byte) { return w.owner.patch(a.ID, "", map[string]any{"visibility": "public"}) },
			func() (int, []byte) { return w.owner.do("DELETE", "/v1/agents/"+agent, nil) })
		count(fmt.Sprintf("agent move %d, erase %d", moved, erased))
		for _, g := range []string{"agent-" + agent + "-public", "agent-" + agent + "-private"} {
			if n := orphans(g); n != 0 {
				t.Errorf("round %d: %d nodes left in the erased agent's %s (move %d, erasure %d)", round, n, g, moved, erased)
			}
		}
	}
	// Five rounds at a time, each on its own team and agent (a move that loses a
	// deadlock to an erasure waits for the driver's retry).
	rounds := make(chan int)
	var workers sync.WaitGroup
	for range 5 {
		workers.Go(func() {
			for round := range rounds {
				raceOnce(round)
			}
		})
	}
	for round := range raceRounds {
		rounds <- round
	}
	close(rounds)
	workers.Wait()
	t.Logf("%d rounds: %v", raceRounds, outcomes)
}

// TestVersions_VisibilityRuleAndPromotion (finding 5): the text a visibility rule kept
// private never reaches a wider audience through the versions of a memory moved out,
// nor through a promoted copy.
func TestVersions_VisibilityRuleAndPromotion(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) {
		s.Limits.VisibilityRules = []service.VisibilityRule{{Name: "ssn", Pattern: regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)}}
	})
	w := newTeamWorld(t, srv.URL, "rulev")
	var r [4]byte
	_, _ = rand.Read(r[:])
	// A number of its own: other tests' numbers are stored meanwhile.
	secret := fmt.Sprintf("%03d-%02d-%04d", 100+int(r[0])%900, 10+int(r[1])%90, 1000+(int(r[2])<<8|int(r[3]))%9000)
	write := func(text string) added {
		var a added
		w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": text, "visibility": "public"}, &a)
		if a.GroupID != "agent-"+w.agent+"-private" {
			t.Fatalf("the rule did not keep %q private: %+v", text, a)
		}
		return a
	}
	versionsSeenBy := func(c client, id string) string {
		_, body := c.do("GET", "/v1/memories/"+id+"/versions", nil)
		return string(body)
	}

	// Rewritten, then moved: two updates.
	twoSteps := write("Her SSN is " + secret + ".")
	if s, body := w.owner.patch(twoSteps.ID, "", map[string]any{"messages": "Her birthday is in May."}); s != http.StatusOK {
		t.Fatalf("rewriting: %d %s", s, body)
	}
	if s, body := w.owner.patch(twoSteps.ID, "", map[string]any{"visibility": "public"}); s != http.StatusOK {
		t.Fatalf("moving: %d %s", s, body)
	}
	// Rewritten and moved in one update.
	oneStep := write("His SSN is " + secret + ".")
	if s, body := w.owner.patch(oneStep.ID, "", map[string]any{"messages": "His birthday is in June.", "visibility": "public"}); s != http.StatusOK {
		t.Fatalf("rewriting and moving: %d %s", s, body)
	}
	for _, id := range []string{twoSteps.ID, oneStep.ID} {
		if got := versionsSeenBy(w.other, id); !strings.Contains(got, "birthday") || strings.Contains(got, secret) {
			t.Errorf("another requester reads the versions of %s: %s", id, got)
		}
		if _, public := storedWith(t, secret, "agent-"+w.agent+"-public"); public != 0 {
			t.Errorf("%d memories or versions of the public space hold the number", public)
		}
	}

	// Promoting what the rule kept private is refused, audited, and copies nothing.
	kept := write("Their SSN is " + secret + ".")
	w.admin.must(http.StatusNoContent, "PUT", "/v1/promoters/"+w.owner.requester, nil, nil)
	for _, target := range []string{"team:" + w.team, "global"} {
		if s, body := w.owner.do("POST", "/v1/memories/"+kept.ID+"/promote", map[string]any{"target": target}); s != http.StatusForbidden {
			t.Errorf("promoting the rule-kept memory to %s: %d %s, want 403", target, s, body)
		}
	}
	if anywhere, private := storedWith(t, secret, "agent-"+w.agent+"-private"); anywhere != private {
		t.Errorf("the number is stored %d times, %d of them in the private space", anywhere, private)
	}
	var events struct{ Events []struct{ Kind string } }
	w.admin.must(http.StatusOK, "GET", "/v1/audit?kind=namespace_denied&subject="+kept.ID, nil, &events)
	if len(events.Events) != 2 {
		t.Errorf("the refused promotions audited %d times, want 2", len(events.Events))
	}

	// Nor does a rewrite of a promoted copy put such text into the global space.
	var harmless, copied added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "A harmless note.", "visibility": "public"}, &harmless)
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/"+harmless.ID+"/promote", map[string]any{"target": "global"}, &copied)
	if s, body := w.owner.patch(copied.ID, "", map[string]any{"messages": "Global now holds " + secret + "."}); s != http.StatusForbidden {
		t.Errorf("rewriting the global copy with the number: %d %s, want 403", s, body)
	}
	if _, global := storedWith(t, secret, "global"); global != 0 {
		t.Errorf("%d memories of the global space hold the number", global)
	}
}

// TestVersions_PagedBoundedAndAttributed (finding 6): /versions answers in pages, a
// memory keeps at most memory.max_versions earlier versions, and who replaced a
// version is shown only to those who may change the memory.
func TestVersions_PagedBoundedAndAttributed(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) { s.Limits.MaxVersions = 5 })
	w := newTeamWorld(t, srv.URL, "vpage")
	var a added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "draft 1", "visibility": "public"}, &a)
	for i := 2; i <= 8; i++ {
		if s, body := w.owner.patch(a.ID, "", map[string]any{"messages": fmt.Sprintf("draft %d", i)}); s != http.StatusOK {
			t.Fatalf("update %d: %d %s", i, s, body)
		}
	}
	if n := neo4jtest.Count(t, "MATCH (v:MemoryVersion {episode_uuid: $id}) RETURN count(v)", map[string]any{"id": a.ID}); n != 5 {
		t.Errorf("%d versions kept, want 5", n)
	}
	type page struct {
		Versions []struct {
			Version    int    `json:"version"`
			Content    string `json:"content"`
			ReplacedBy string `json:"replaced_by"`
		} `json:"versions"`
		NextCursor string `json:"next_cursor"`
		HasMore    bool   `json:"has_more"`
	}
	read := func(c client) (seen []int, by []string) {
		cursor := ""
		for range 10 {
			var p page
			c.must(http.StatusOK, "GET", "/v1/memories/"+a.ID+"/versions?limit=2"+cursor, nil, &p)
			for _, v := range p.Versions {
				seen, by = append(seen, v.Version), append(by, v.ReplacedBy)
			}
			if !p.HasMore {
				return seen, by
			}
			if len(p.Versions) != 2 {
				t.Fatalf("a page of %d versions before the last", len(p.Versions))
			}
			cursor = "&cursor=" + p.NextCursor
		}
		t.Fatal("the pages never end")
		return nil, nil
	}
	seen, by := read(w.owner)
	if fmt.Sprint(seen) != "[7 6 5 4 3]" {
		t.Errorf("the owner reads versions %v, want [7 6 5 4 3]", seen)
	}
	for _, b := range by {
		if b != w.owner.requester {
			t.Errorf("the owner reads replaced_by %q, want its own id", b)
		}
	}
	_, by = read(w.other)
	for _, b := range by {
		if b != "" {
			t.Errorf("another requester reads replaced_by %q", b)
		}
	}
	if s, body := w.owner.sendMalformed("GET", "/v1/memories/"+a.ID+"/versions?cursor=zz", nil); s != http.StatusBadRequest {
		t.Errorf("a cursor memgate did not issue: %d %s", s, body)
	}
}

// TestUpdate_PublicRewritesCountAgainstTheQuota (finding 6): rewriting a public
// memory's content is a public write, and the quota refuses it once spent.
func TestUpdate_PublicRewritesCountAgainstTheQuota(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) { s.Limits.PublicWritesPerDay = 2 })
	w := newTeamWorld(t, srv.URL, "quotap")
	var a added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "one", "visibility": "public"}, &a)
	if s, body := w.owner.patch(a.ID, "", map[string]any{"messages": "one, rewritten"}); s != http.StatusOK {
		t.Fatalf("the second public write: %d %s", s, body)
	}
	if s, body := w.owner.patch(a.ID, "", map[string]any{"messages": "one, rewritten again"}); s != http.StatusTooManyRequests {
		t.Errorf("a rewrite over the quota: %d %s, want 429", s, body)
	}
	if s, body := w.owner.patch(a.ID, "", map[string]any{"tags": []string{"t"}}); s != http.StatusOK {
		t.Errorf("a tag change over the quota (no new text): %d %s, want 200", s, body)
	}
	var m struct{ Content string }
	w.owner.must(http.StatusOK, "GET", "/v1/memories/"+a.ID, nil, &m)
	if m.Content != "one, rewritten" {
		t.Errorf("the refused rewrite changed the memory: %q", m.Content)
	}
}

// TestCompaction_DerivedFromHidden (finding 6): a compaction moved to the public space
// does not list the ids of the private memories it was written from to others.
func TestCompaction_DerivedFromHidden(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "derive")
	var a added
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": w.agent, "messages": "A private thought."}, &a)
	var c struct {
		ID          string   `json:"id"`
		DerivedFrom []string `json:"derived_from"`
	}
	w.owner.must(http.StatusAccepted, "POST", "/v1/memories/compact", map[string]any{"agent_id": w.agent, "episode_ids": []string{a.ID}, "max_tokens": 200}, &c)
	if s, body := w.owner.patch(c.ID, "", map[string]any{"visibility": "public"}); s != http.StatusOK {
		t.Fatalf("moving the compaction: %d %s", s, body)
	}
	var mine, theirs struct {
		DerivedFrom []string `json:"derived_from"`
	}
	w.owner.must(http.StatusOK, "GET", "/v1/memories/"+c.ID, nil, &mine)
	w.other.must(http.StatusOK, "GET", "/v1/memories/"+c.ID, nil, &theirs)
	if len(mine.DerivedFrom) != 1 || len(theirs.DerivedFrom) != 0 {
		t.Errorf("derived_from: the owner reads %v, another requester %v", mine.DerivedFrom, theirs.DerivedFrom)
	}
	_, body := w.other.do("GET", "/v1/memories/"+c.ID+"/versions", nil)
	if strings.Contains(string(body), a.ID) {
		t.Errorf("another requester reads the private memory's id in the versions: %s", body)
	}
	// Nor through a copy it promotes into a team of its own.
	team := "derive-other-" + w.team
	w.admin.must(http.StatusCreated, "POST", "/v1/teams", map[string]any{"name": team}, nil)
	w.admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+team+"/members/"+w.other.requester, map[string]any{"role": "writer"}, nil)
	status, body := w.other.do("POST", "/v1/memories/"+c.ID+"/promote", map[string]any{"target": "team:" + team})
	var cp struct {
		ID string `json:"id"`
	}
	mustDecode(t, status, http.StatusAccepted, body, &cp)
	_, got := w.other.do("GET", "/v1/memories/"+cp.ID, nil)
	if strings.Contains(string(body)+string(got), a.ID) {
		t.Errorf("the promoted copy names the private memory: %s %s", body, got)
	}
}

// TestConflicts_ExpiredFactRefusedUnchanged (finding 6): resolving a conflict one of
// whose facts is gone with its expired memory is refused before anything changes:
// the lasting fact is not ended and no resolution is audited.
func TestConflicts_ExpiredFactRefusedUnchanged(t *testing.T) {
	t.Parallel()
	owner, _, agent := ownerWorld(t)
	group := "agent-" + agent + "-private"
	id := neo4jtest.SeedConflict(t, group, "Dana"+randomSuffix())
	// The new fact's only memory has expired: every read path hides it from now on.
	if err := neo4jtest.Run(neo4jtest.URI(t), `MATCH (c:Conflict {uuid: $id}) MATCH ()-[r:RELATES_TO {uuid: c.new_fact}]->()
		SET r.supported_until = datetime() - duration('PT1M')`, map[string]any{"id": id}); err != nil {
		t.Fatal(err)
	}
	status, body := owner.do("POST", "/v1/conflicts/"+id+"/resolve", map[string]any{"keep": "new"})
	if status != http.StatusNotFound || !strings.Contains(string(body), "nothing was changed") {
		t.Errorf("resolving the conflict of an expired fact: %d %s, want 404 saying nothing changed", status, body)
	}
	if n := neo4jtest.Count(t, `MATCH (c:Conflict {uuid: $id}) MATCH ()-[r:RELATES_TO {uuid: c.old_fact}]->()
		WHERE r.invalid_at IS NULL AND r.expired_at IS NULL AND size(r.conflicts) = 1 AND c.keep IS NULL RETURN count(r)`,
		map[string]any{"id": id}); n != 1 {
		t.Error("the refused resolution changed the lasting fact or the conflict")
	}
	if got := audited(owner, "conflict_resolved", id); len(got) != 0 {
		t.Errorf("the refused resolution was audited: %+v", got)
	}
}
