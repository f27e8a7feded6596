package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// What an extraction derived from the earlier memories it was shown (here the
// speaker's name, which the offline extractor takes from an earlier "I'm ...") follows
// them: when one moves to a private space or is deleted, the memories extracted with
// it are extracted again without it, so no one reading the public space keeps its
// words. A memory stored without extraction is never shown to an extraction at all.
func TestContextEpisodes_FollowTheirSource(t *testing.T) {
	t.Parallel()
	owner, other, agent := ownerWorld(t)
	ingest(t, "agent-"+agent+"-")
	post := func(text string, extract bool) string {
		t.Helper()
		var a struct{ ID string }
		owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "visibility": "public",
			"messages": text, "extract": extract}, &a)
		waitStatus(t, owner, a.ID)
		return a.ID
	}
	named := func(prefix string) bool {
		t.Helper()
		var page struct{ Items []struct{ Name string } }
		other.must(http.StatusOK, "GET", "/v1/entities?"+url.Values{"agent_id": {agent}, "name_prefix": {prefix}}.Encode(), nil, &page)
		return len(page.Items) > 0
	}
	// said: what the block derived (its facts and entities, not the memories it quotes,
	// which the other requester reads anyway) holds word.
	said := func(query, word string) bool {
		t.Helper()
		var tc struct{ Context string }
		other.must(http.StatusOK, "POST", "/v1/agents/"+agent+"/context", map[string]any{"query": query}, &tc)
		derived, _, _ := strings.Cut(tc.Context, "Relevant memories:")
		return strings.Contains(derived, word)
	}

	moved := post("Hi, I'm Vexrepro Quillrepro.", true)
	later := post("I work at Reproplex.", true)
	if !named("Vexrepro") {
		t.Fatal("the later memory's extraction did not take the speaker's name from the earlier one: nothing to test")
	}
	if s, body := owner.patch(moved, "", map[string]any{"visibility": "private"}); s != http.StatusOK {
		t.Fatalf("moving the introduction to private: %d %s", s, body)
	}
	waitStatus(t, owner, later)
	if named("Vexrepro") || said("Reproplex work", "Vexrepro") {
		t.Error("after the introduction moved to private, the public space still names its speaker")
	}

	deleted := post("Hi, I'm Zorvex Plimm.", true)
	lives := post("I live in Quarnet.", true)
	if !named("Zorvex") {
		t.Fatal("no Zorvex from the context: nothing to test")
	}
	owner.must(http.StatusNoContent, "DELETE", "/v1/memories/"+deleted, nil, nil)
	waitStatus(t, owner, lives)
	if named("Zorvex") || said("Quarnet live", "Zorvex") {
		t.Error("after the introduction was deleted, the public space still names its speaker")
	}

	post("Hi, I'm Kelvor Brandt.", false)
	post("I work at Tessaly.", true)
	if named("Kelvor") || said("Tessaly work", "Kelvor") {
		t.Error("a memory stored without extraction named the speaker of a later one")
	}
}
