package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// delegationWorld is an agent of its owner's, a requester its owner may delegate to,
// and others, on a server of the matrix's keys.
type delegationWorld struct {
	t                          *testing.T
	agent                      string
	owner, dan, mallory, admin client
	heir                       client
	delegatePath               string
}

func newDelegationWorld(t *testing.T) delegationWorld {
	srv := newServer(t, matrixKeyring())
	suffix := randomSuffix()
	neo4jtest.Forget(t, suffix)
	as := func(who, key string) client {
		return client{t: t, base: srv.URL, key: matrixKeys[key], requester: "dg-" + who + "-" + suffix}
	}
	w := delegationWorld{t: t, agent: "dg-agent-" + suffix, owner: as("owner", "trusted"), dan: as("dan", "trusted"),
		mallory: as("mallory", "trusted"), admin: as("root", "admin"), heir: as("heir", "trusted")}
	w.owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": w.agent}, nil)
	w.delegatePath = "/v1/agents/" + w.agent + "/delegates/" + w.dan.requester
	return w
}

// write posts a memory of the world's agent as c, and answers the status and the id.
func (w delegationWorld) write(c client, visibility, text string) (int, string) {
	w.t.Helper()
	var a added
	status, out := c.do("POST", "/v1/memories", map[string]any{"agent_id": w.agent, "visibility": visibility, "messages": text})
	if status == http.StatusAccepted {
		mustUnmarshal(w.t, out, &a)
	}
	return status, a.ID
}

// delegates is the agent's delegations as c is shown them (nil: none shown).
func (w delegationWorld) delegates(c client) []delegation {
	w.t.Helper()
	var a agentDelegates
	c.must(http.StatusOK, "GET", "/v1/agents/"+w.agent, nil, &a)
	return a.Delegates
}

// events counts the audit events of kind by actor about subject.
func (w delegationWorld) events(kind, actor, subject string) int {
	w.t.Helper()
	var page struct {
		Events []struct{ Reason string }
	}
	q := url.Values{"kind": {kind}, "actor": {actor}, "subject": {subject}, "limit": {"100"}}
	w.admin.must(http.StatusOK, "GET", "/v1/audit?"+q.Encode(), nil, &page)
	return len(page.Events)
}

// TestDelegate: only the owner delegates (400 for a bad body or itself, 403 audited
// for anyone else, 404 for an agent that does not exist); the delegate then adds,
// updates and deletes the agent's memories, each recording it as writer, but reads
// only what everyone reads: its private write is write-only for it; it never
// delegates further. The owner (and admin keys) see the delegation on the agent and in
// the list, no one else. Granting and revoking are audited; revoked, the delegate's
// writes are refused (403, audited).
func TestDelegate(t *testing.T) {
	t.Parallel()
	w := newDelegationWorld(t)
	owner, dan, mallory, admin := w.owner, w.dan, w.mallory, w.admin

	if status, _ := w.write(dan, "public", "Before any delegation."); status != http.StatusForbidden {
		t.Fatalf("dan writing before the delegation: %d, want 403", status)
	}
	deniedBefore := w.events("namespace_denied", dan.requester, w.agent)
	for _, tc := range []struct {
		name      string
		who       client
		path      string
		body      any
		malformed bool // breaks openapi.json, so sent past the contract check
		status    int
	}{
		{"another role", owner, w.delegatePath, map[string]any{"role": "reader"}, true, http.StatusBadRequest},
		{"no role", owner, w.delegatePath, map[string]any{}, true, http.StatusBadRequest},
		{"no body", owner, w.delegatePath, nil, true, http.StatusBadRequest},
		{"an unknown field", owner, w.delegatePath, map[string]any{"role": "writer", "space": "team"}, true, http.StatusBadRequest},
		{"expires_at past", owner, w.delegatePath, map[string]any{"role": "writer", "expires_at": time.Now().Add(-time.Minute).Format(time.RFC3339)}, false, http.StatusBadRequest},
		{"to the owner", owner, "/v1/agents/" + w.agent + "/delegates/" + owner.requester, map[string]any{"role": "writer"}, false, http.StatusBadRequest},
		{"by a stranger", mallory, w.delegatePath, map[string]any{"role": "writer"}, false, http.StatusForbidden},
		{"by a stranger to the owner", mallory, "/v1/agents/" + w.agent + "/delegates/" + owner.requester, map[string]any{"role": "writer"}, false, http.StatusForbidden},
		{"by an admin key", admin, w.delegatePath, map[string]any{"role": "writer"}, false, http.StatusForbidden},
		{"by the delegate-to-be", dan, w.delegatePath, map[string]any{"role": "writer"}, false, http.StatusForbidden},
		{"of no agent", owner, "/v1/agents/" + w.agent + "-ghost/delegates/" + dan.requester, map[string]any{"role": "writer"}, false, http.StatusNotFound},
	} {
		send := tc.who.do
		if tc.malformed {
			send = tc.who.sendMalformed
		}
		if status, body := send("PUT", tc.path, tc.body); status != tc.status {
			t.Errorf("delegating %s: %d, want %d: %s", tc.name, status, tc.status, body)
		}
	}
	if got := w.events("namespace_denied", mallory.requester, w.agent); got != 2 {
		t.Errorf("mallory's refused delegations: %d namespace_denied events, want 2", got)
	}
	if got := w.events("namespace_denied", admin.requester, w.agent); got != 1 {
		t.Errorf("the admin key's refused delegation: %d namespace_denied events, want 1", got)
	}
	if d := w.delegates(owner); len(d) != 0 {
		t.Fatalf("after the refused delegations the agent has %+v", d)
	}

	owner.must(http.StatusNoContent, "PUT", w.delegatePath, map[string]any{"role": "writer"}, nil)
	if got := w.events("delegate_granted", owner.requester, w.agent); got != 1 {
		t.Errorf("the grant: %d delegate_granted events, want 1", got)
	}
	// The owner and admin keys see it, on the agent and in the list; no one else.
	want := []delegation{{Principal: dan.requester, Role: "writer"}}
	if d := w.delegates(owner); !slices.Equal(d, want) {
		t.Errorf("the owner sees delegates %+v, want %+v", d, want)
	}
	if d := w.delegates(admin); !slices.Equal(d, want) {
		t.Errorf("an admin key sees delegates %+v, want %+v", d, want)
	}
	for _, c := range []client{dan, mallory} {
		if d := w.delegates(c); d != nil {
			t.Errorf("%s sees delegates %+v, want none", c.requester, d)
		}
	}
	var list struct {
		Items []struct {
			ID        string       `json:"id"`
			Delegates []delegation `json:"delegates"`
		}
	}
	owner.must(http.StatusOK, "GET", "/v1/agents", nil, &list)
	if i := slices.IndexFunc(list.Items, func(a struct {
		ID        string       `json:"id"`
		Delegates []delegation `json:"delegates"`
	}) bool {
		return a.ID == w.agent
	}); i < 0 || !slices.Equal(list.Items[i].Delegates, want) {
		t.Errorf("the owner's list of agents: %+v, want the agent with delegates %+v", list.Items, want)
	}

	// A private write is write-only for the delegate: accepted, then 404 to it; the
	// owner reads it, written by dan.
	status, private := w.write(dan, "private", "Dan noted the vault code for the owner.")
	if status != http.StatusAccepted {
		t.Fatalf("dan's private write: %d, want 202", status)
	}
	if status, _ := dan.do("GET", "/v1/memories/"+private, nil); status != http.StatusNotFound {
		t.Errorf("dan reading the private memory it wrote: %d, want 404", status)
	}
	var page struct{ Items []memory }
	dan.must(http.StatusOK, "GET", "/v1/memories?agent_id="+w.agent, nil, &page)
	for _, m := range page.Items {
		if m.ID == private {
			t.Errorf("dan lists the private memory it wrote")
		}
	}
	if status, _ := dan.do("DELETE", "/v1/memories/"+private, nil); status != http.StatusNotFound {
		t.Errorf("dan deleting the private memory it wrote: %d, want 404", status)
	}
	// So is a fact it states there: accepted (202, with the memory), never a 404 for a
	// write that was stored, and nothing of the fact shown to it.
	var fact added
	dan.must(http.StatusAccepted, "POST", "/v1/facts", map[string]any{"agent_id": w.agent, "visibility": "private",
		"source": map[string]any{"name": "Dana"}, "relation": "LIVES_IN", "target": map[string]any{"name": "Lisbon"}}, &fact)
	if fact.ID == "" {
		t.Errorf("dan's private fact: %+v, want the memory it is stored in", fact)
	}
	owner.must(http.StatusOK, "GET", "/v1/memories/"+fact.ID, nil, nil)
	var byOwner versioned
	owner.must(http.StatusOK, "GET", "/v1/memories/"+private, nil, &byOwner)
	if byOwner.WrittenBy != dan.requester {
		t.Errorf("the owner reads the private memory as written by %q, want %s", byOwner.WrittenBy, dan.requester)
	}
	// Not the agent's own words: it never moves, even by the owner.
	if status, _ := owner.patch(private, "", map[string]any{"visibility": "public"}); status != http.StatusForbidden {
		t.Errorf("the owner moving the delegate's memory: %d, want 403", status)
	}

	// A public write: the delegate reads, updates and deletes it; its writer is shown to
	// who may change it, not to a reader.
	status, public := w.write(dan, "public", "Dan published the opening hours.")
	if status != http.StatusAccepted {
		t.Fatalf("dan's public write: %d, want 202", status)
	}
	var read versioned
	dan.must(http.StatusOK, "GET", "/v1/memories/"+public, nil, &read)
	if read.WrittenBy != dan.requester {
		t.Errorf("dan reads its public memory as written by %q", read.WrittenBy)
	}
	var other versioned
	mallory.must(http.StatusOK, "GET", "/v1/memories/"+public, nil, &other)
	if other.WrittenBy != "" {
		t.Errorf("mallory is shown the public memory's writer %q", other.WrittenBy)
	}
	_, ownerPublic := w.write(owner, "public", "The owner's public memory.")
	status, out := dan.patch(ownerPublic, "", map[string]any{"tags": []string{"checked"}})
	var updated versioned
	mustUnmarshal(t, out, &updated)
	if status != http.StatusOK || updated.UpdatedBy != dan.requester || updated.WrittenBy != owner.requester {
		t.Errorf("dan updating the owner's public memory: %d, written by %q, updated by %q", status, updated.WrittenBy, updated.UpdatedBy)
	}
	if got := w.events("updated", dan.requester, ownerPublic); got != 1 {
		t.Errorf("dan's update: %d updated events by dan, want 1", got)
	}
	if status, _ := dan.do("DELETE", "/v1/memories/"+public, nil); status != http.StatusNoContent {
		t.Errorf("dan deleting its public memory: %d, want 204", status)
	}
	if got := w.events("deleted", dan.requester, public); got != 1 {
		t.Errorf("dan's delete: %d deleted events by dan, want 1", got)
	}

	// Never further, never the agent itself.
	for _, tc := range []struct{ method, path string }{
		{"PUT", "/v1/agents/" + w.agent + "/delegates/" + mallory.requester},
		{"DELETE", w.delegatePath},
		{"PUT", "/v1/agents/" + w.agent + "/shares/" + mallory.requester},
		{"DELETE", "/v1/agents/" + w.agent},
	} {
		var body any
		if tc.method == "PUT" && tc.path != "/v1/agents/"+w.agent+"/shares/"+mallory.requester {
			body = map[string]any{"role": "writer"}
		}
		if status, out := dan.do(tc.method, tc.path, body); status != http.StatusForbidden {
			t.Errorf("dan: %s %s: %d, want 403: %s", tc.method, tc.path, status, out)
		}
	}
	if status, _ := dan.do("POST", "/v1/agents/"+w.agent+"/reflect", map[string]any{}); status != http.StatusForbidden {
		t.Errorf("dan reflecting the agent: %d, want 403", status)
	}

	// Revoked: dan's next write is refused and audited.
	if status, _ := owner.sendMalformed("DELETE", w.delegatePath, map[string]any{"role": "writer"}); status != http.StatusBadRequest {
		t.Errorf("revoking with a body: %d, want 400", status)
	}
	owner.must(http.StatusNoContent, "DELETE", w.delegatePath, nil, nil)
	if got := w.events("delegate_revoked", owner.requester, w.agent); got != 1 {
		t.Errorf("the revocation: %d delegate_revoked events, want 1", got)
	}
	if d := w.delegates(owner); len(d) != 0 {
		t.Errorf("after the revocation the owner sees delegates %+v", d)
	}
	denied := w.events("namespace_denied", dan.requester, w.agent)
	for _, visibility := range []string{"private", "public"} {
		if status, _ := w.write(dan, visibility, "After the revocation."); status != http.StatusForbidden {
			t.Errorf("dan's %s write after the revocation: %d, want 403", visibility, status)
		}
	}
	if status, _ := dan.patch(ownerPublic, "", map[string]any{"tags": []string{"again"}}); status != http.StatusForbidden {
		t.Errorf("dan's update after the revocation: %d, want 403", status)
	}
	if got := w.events("namespace_denied", dan.requester, w.agent) - denied; got != 2 {
		t.Errorf("dan's refused writes after the revocation: %d namespace_denied events about the agent, want 2", got)
	}
	if got := w.events("namespace_denied", dan.requester, ownerPublic); got != 1 {
		t.Errorf("dan's refused update after the revocation: %d namespace_denied events, want 1", got)
	}
	if deniedBefore != 1 {
		t.Errorf("dan's write before the delegation: %d namespace_denied events, want 1", deniedBefore)
	}
}

// TestDelegate_Expires: a delegation granted until a time gives nothing from then on,
// without anyone revoking it: the former delegate's writes are refused (403, audited)
// and the owner sees it marked expired.
func TestDelegate_Expires(t *testing.T) {
	t.Parallel()
	w := newDelegationWorld(t)
	until := time.Now().Add(1500 * time.Millisecond)
	w.owner.must(http.StatusNoContent, "PUT", w.delegatePath, map[string]any{"role": "writer", "expires_at": until.Format(time.RFC3339Nano)}, nil)
	if status, _ := w.write(w.dan, "public", "While the delegation holds."); status != http.StatusAccepted && time.Now().Before(until) {
		t.Fatalf("dan writing while the delegation holds: %d", status)
	}
	if d := w.delegates(w.owner); len(d) != 1 || d[0].Expired && time.Now().Before(until) {
		t.Errorf("the owner sees delegates %+v while it holds", d)
	}
	// Wait for the end by polling what the owner sees (the store's clock, which the
	// principal's resolution reads too), then write once.
	for deadline, wait := time.Now().Add(30*time.Second), neo4jtest.FirstPoll; ; wait = neo4jtest.Poll(wait) {
		if d := w.delegates(w.owner); len(d) == 1 && d[0].Expired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the delegation is not marked expired 30 s after %v", until)
		}
	}
	denied := w.events("namespace_denied", w.dan.requester, w.agent)
	if status, _ := w.write(w.dan, "public", "After the delegation ended."); status != http.StatusForbidden {
		t.Fatalf("dan writing after the delegation ended: %d, want 403", status)
	}
	if got := w.events("namespace_denied", w.dan.requester, w.agent) - denied; got != 1 {
		t.Errorf("dan's refused write after the end: %d namespace_denied events, want 1", got)
	}
	if d := w.delegates(w.owner); len(d) != 1 || !d[0].Expired || d[0].Principal != w.dan.requester {
		t.Errorf("the owner sees delegates %+v after the end, want dan's marked expired", d)
	}
}

// TestDelegate_TransferAndErase: a transfer drops the agent's delegations (the new
// owner inherits no delegates, and the old one's delegate writes no more); an erasure
// takes them with the agent.
func TestDelegate_TransferAndErase(t *testing.T) {
	t.Parallel()
	w := newDelegationWorld(t)
	w.owner.must(http.StatusNoContent, "PUT", w.delegatePath, map[string]any{"role": "writer"}, nil)
	w.owner.must(http.StatusNoContent, "PUT", "/v1/agents/"+w.agent+"/owner", map[string]any{"owner_id": w.heir.requester}, nil)
	if d := w.delegates(w.heir); len(d) != 0 {
		t.Errorf("the new owner sees delegates %+v, want none", d)
	}
	if status, _ := w.write(w.dan, "public", "After the transfer."); status != http.StatusForbidden {
		t.Errorf("the old owner's delegate writing after the transfer: %d, want 403", status)
	}
	// The new owner delegates afresh, and may erase the agent: nothing of it is left.
	w.heir.must(http.StatusNoContent, "PUT", w.delegatePath, map[string]any{"role": "writer"}, nil)
	if status, _ := w.write(w.dan, "public", "Delegated by the new owner."); status != http.StatusAccepted {
		t.Errorf("dan writing when the new owner delegated: %d, want 202", status)
	}
	w.heir.must(http.StatusOK, "DELETE", "/v1/agents/"+w.agent, nil, nil)
	if n := neo4jtest.Count(t, "MATCH ()-[d:DELEGATED_TO]->(:Principal {id: $p}) RETURN count(d)",
		map[string]any{"p": w.dan.requester}); n != 0 {
		t.Errorf("%d delegations left after the erasure", n)
	}
	if status, _ := w.write(w.dan, "public", "After the erasure."); status != http.StatusNotFound {
		t.Errorf("dan writing for the erased agent: %d, want 404", status)
	}
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}
