package handlers_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// ownerWorld is one fresh agent with its owner, through a trusted host in dev mode.
// The agent's id holds the test's mark: what a test names after the agent is erased
// with the rest when it ends.
func ownerWorld(t *testing.T) (owner, other client, agent string) {
	t.Helper()
	srv := newServer(t, nil)
	w := &world{base: srv.URL, t: t, suffix: randomSuffix()}
	neo4jtest.Forget(t, w.suffix)
	owner, other = w.as("owner", "trusted"), w.as("other", "trusted")
	agent = w.id("agent")
	owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	return owner, other, agent
}

func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func countEpisodes(t *testing.T, c client, agent string) int {
	t.Helper()
	var page struct{ Items []memory }
	c.must(http.StatusOK, "GET", "/v1/memories?limit=100&agent_id="+agent, nil, &page)
	return len(page.Items)
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	owner, _, agent := ownerWorld(t)
	body := map[string]any{"agent_id": agent, "messages": "Alice works at Acme as an engineer."}
	post := func(key string, body any) (int, added) {
		t.Helper()
		req, _ := json.Marshal(body)
		resp, out := do(t, "POST", owner.base+"/v1/memories", map[string]string{"Authorization": "Bearer " + owner.key,
			"X-Requester-Id": owner.requester, "Idempotency-Key": key, "Content-Type": "application/json"}, string(req))
		var a added
		_ = json.Unmarshal(out, &a)
		return resp.StatusCode, a
	}

	t.Run("FiveReplaysStoreOne", func(t *testing.T) {
		var first string
		for i := 0; i < 5; i++ {
			status, a := post("replay-key", body)
			if status != http.StatusAccepted {
				t.Fatalf("attempt %d: status %d", i, status)
			}
			if first == "" {
				first = a.ID
			} else if a.ID != first {
				t.Fatalf("attempt %d stored %s, want the first episode %s", i, a.ID, first)
			}
		}
		if n := countEpisodes(t, owner, agent); n != 1 {
			t.Fatalf("%d episodes stored, want 1", n)
		}
	})

	t.Run("ErrSameKeyOtherBody", func(t *testing.T) {
		other := map[string]any{"agent_id": agent, "messages": "Something else entirely."}
		if status, _ := post("replay-key", other); status != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422", status)
		}
	})

	t.Run("ErrSameKeyOtherSpace", func(t *testing.T) {
		// The first use of the key stored into the private space; the same key for
		// the public space is another request: 422 every time, not 409 ("in flight,
		// retry") forever.
		public := map[string]any{"agent_id": agent, "messages": body["messages"], "visibility": "public"}
		for i := 0; i < 3; i++ {
			if status, _ := post("replay-key", public); status != http.StatusUnprocessableEntity {
				t.Fatalf("attempt %d: status %d, want 422", i, status)
			}
		}
		if n := countEpisodes(t, owner, agent); n != 1 {
			t.Fatalf("%d episodes stored, want the first only", n)
		}
	})

	t.Run("ConcurrentDuplicatesOneWinner", func(t *testing.T) {
		const n = 8
		var wg sync.WaitGroup
		statuses := make([]int, n)
		ids := make([]string, n)
		b := map[string]any{"agent_id": agent, "messages": "Concurrent duplicate."}
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				statuses[i], _ = post("concurrent-key", b)
				_, a := post("concurrent-key", b) // a retry after the race reads the winner
				ids[i] = a.ID
			}(i)
		}
		wg.Wait()
		for i := range statuses {
			if statuses[i] != http.StatusAccepted && statuses[i] != http.StatusConflict {
				t.Errorf("request %d: status %d, want 202 or 409", i, statuses[i])
			}
			if ids[i] == "" || ids[i] != ids[0] {
				t.Errorf("retry %d saw episode %q, want the one winner %q", i, ids[i], ids[0])
			}
		}
		var page struct{ Items []memory }
		owner.must(http.StatusOK, "GET", "/v1/memories?limit=100&agent_id="+agent, nil, &page)
		count := 0
		for _, m := range page.Items {
			if m.ID == ids[0] {
				count++
			}
		}
		if n := countEpisodes(t, owner, agent); n != 2 || count != 1 {
			t.Fatalf("%d episodes stored (want 2: one per key), winner listed %d times", n, count)
		}
	})

	t.Run("KeysAreScopedToTheRequester", func(t *testing.T) {
		// The same key from another requester is another request: it is refused for
		// its own reason (not the owner), not answered with the owner's episode.
		req, _ := json.Marshal(body)
		resp, out := do(t, "POST", owner.base+"/v1/memories", map[string]string{"Authorization": "Bearer " + owner.key,
			"X-Requester-Id": "someone-else-" + agent, "Idempotency-Key": "replay-key", "Content-Type": "application/json"}, string(req))
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d, want 403: %s", resp.StatusCode, out)
		}
	})
}

func TestAddMemory_ErrInvalid(t *testing.T) {
	t.Parallel()
	owner, _, agent := ownerWorld(t)
	cases := map[string]string{
		"EmptyBody":         ``,
		"NotJSON":           `{"agent_id":`,
		"Array":             `[]`,
		"TwoObjects":        `{"agent_id":"` + agent + `","messages":"x"}{}`,
		"UnknownField":      `{"agent_id":"` + agent + `","messages":"x","group_id":"global"}`,
		"ForgedStatus":      `{"agent_id":"` + agent + `","messages":"x","status":"done"}`,
		"ForgedOwner":       `{"agent_id":"` + agent + `","messages":"x","owner_id":"root"}`,
		"NoAgent":           `{"messages":"x"}`,
		"BadAgent":          `{"agent_id":"Agent One","messages":"x"}`,
		"NoMessages":        `{"agent_id":"` + agent + `"}`,
		"EmptyMessages":     `{"agent_id":"` + agent + `","messages":"  "}`,
		"EmptyList":         `{"agent_id":"` + agent + `","messages":[]}`,
		"MessagesNumber":    `{"agent_id":"` + agent + `","messages":42}`,
		"MessageNoRole":     `{"agent_id":"` + agent + `","messages":[{"content":"hi"}]}`,
		"MessageExtraField": `{"agent_id":"` + agent + `","messages":[{"role":"user","content":"hi","x":1}]}`,
		"Visibility":        `{"agent_id":"` + agent + `","messages":"x","visibility":"secret"}`,
		"TeamWithoutName":   `{"agent_id":"` + agent + `","messages":"x","visibility":"team"}`,
		"TeamOnPrivate":     `{"agent_id":"` + agent + `","messages":"x","team":"x"}`,
		"Source":            `{"agent_id":"` + agent + `","messages":"x","source":"email"}`,
		"JSONSourceNotJSON": `{"agent_id":"` + agent + `","messages":"x","source":"json"}`,
		"Priority":          `{"agent_id":"` + agent + `","messages":"x","priority":"urgent"}`,
		"Confidence":        `{"agent_id":"` + agent + `","messages":"x","confidence":1.5}`,
		"ExpiresInPast":     `{"agent_id":"` + agent + `","messages":"x","expires_at":"2001-01-01T00:00:00Z"}`,
		"BadTime":           `{"agent_id":"` + agent + `","messages":"x","reference_time":"yesterday"}`,
		"TagsNotList":       `{"agent_id":"` + agent + `","messages":"x","tags":"a"}`,
		"EmptyTag":          `{"agent_id":"` + agent + `","messages":"x","tags":[""]}`,
		"MetadataNotObject": `{"agent_id":"` + agent + `","messages":"x","metadata":[1]}`,
		"LongInstructions":  `{"agent_id":"` + agent + `","messages":"x","extraction_instructions":"` + strings.Repeat("é", 2001) + `"}`,
		"InstructionsList":  `{"agent_id":"` + agent + `","messages":"x","extraction_instructions":["a"]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			resp, out := doMalformed(t, "POST", owner.base+"/v1/memories", map[string]string{
				"X-Requester-Id": owner.requester, "Content-Type": "application/json"}, body)
			mustErrorBody(t, resp, out, http.StatusBadRequest, "invalid")
		})
	}
	if n := countEpisodes(t, owner, agent); n != 0 {
		t.Fatalf("%d episodes stored from invalid requests", n)
	}

	t.Run("RequesterHeader", func(t *testing.T) {
		for _, requester := range []string{"", "Alice", "a b", "agent:x", strings.Repeat("a", 64)} {
			resp, out := doMalformed(t, "GET", owner.base+"/v1/memories?agent_id="+agent, map[string]string{"X-Requester-Id": requester}, "")
			mustErrorBody(t, resp, out, http.StatusBadRequest, "invalid")
		}
	})
	t.Run("UnknownAgent", func(t *testing.T) {
		status, out := owner.do("POST", "/v1/memories", map[string]any{"agent_id": "no-such-" + agent, "messages": "x"})
		if status != http.StatusNotFound {
			t.Fatalf("status %d, want 404: %s", status, out)
		}
	})
}

func TestAddMemory_RefusesCredentials(t *testing.T) {
	t.Parallel()
	owner, _, agent := ownerWorld(t)
	for _, text := range []string{
		"my password=hunter22 for the db",
		"key: AKIAIOSFODNN7EXAMPLE",
		"-----BEGIN PRIVATE KEY-----\nabc",
		"Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789",
	} {
		status, out := owner.do("POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": text})
		if status != http.StatusUnprocessableEntity || !strings.Contains(string(out), "refused") {
			t.Errorf("%q: status %d, want 422 with the reason: %s", text, status, out)
		}
	}
	// Every stored string field is checked, and the refusal names the field.
	for field, extra := range map[string]map[string]any{
		"metadata":                {"metadata": map[string]any{"note": "api_key=abcd1234efgh"}},
		"tags":                    {"tags": []string{"db", "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"}},
		"source_description":      {"source_description": "sk-proj-abcdefghijklmnopqrstuvwxyz123456"},
		"extraction_instructions": {"extraction_instructions": "the deploy key is ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"},
	} {
		body := map[string]any{"agent_id": agent, "messages": "ok"}
		for k, v := range extra {
			body[k] = v
		}
		status, out := owner.do("POST", "/v1/memories", body)
		if status != http.StatusUnprocessableEntity || !strings.Contains(string(out), field) {
			t.Errorf("a secret in %s: status %d, want 422 naming the field: %s", field, status, out)
		}
	}
	if n := countEpisodes(t, owner, agent); n != 0 {
		t.Fatalf("%d episodes stored; credentials must never be stored", n)
	}
}

func TestAddMemory_Messages(t *testing.T) {
	t.Parallel()
	owner, other, agent := ownerWorld(t)
	var a added
	owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{
		"agent_id": agent, "visibility": "public", "reference_time": "2024-03-01T09:00:00Z",
		"messages": []map[string]any{{"role": "user", "content": "I moved to Lisbon.", "name": "Alice"},
			{"role": "assistant", "content": "Noted."}},
		"tags": []string{"move"}, "priority": "high", "confidence": 0.9, "metadata": map[string]any{"session": "s1"},
	}, &a)
	var got struct {
		memory
		Status        string
		Content       string
		Messages      []map[string]any
		Source        string
		ReferenceTime string `json:"reference_time"`
		Tags          []string
		Priority      string
		Confidence    float64
		Metadata      map[string]any
	}
	other.must(http.StatusOK, "GET", "/v1/memories/"+a.ID, nil, &got)
	if got.Status != "queued" || got.Source != "message" || len(got.Messages) != 2 ||
		got.Content != "Alice (user): I moved to Lisbon.\nassistant: Noted.\n" ||
		got.ReferenceTime != "2024-03-01T09:00:00Z" || got.Priority != "high" || got.Confidence != 0.9 ||
		got.Metadata["session"] != "s1" || len(got.Tags) != 1 {
		t.Fatalf("stored memory = %+v", got)
	}
}

func TestBatch(t *testing.T) {
	t.Parallel()
	owner, _, agent := ownerWorld(t)
	items := []map[string]any{
		{"agent_id": agent, "messages": "first"},
		{"agent_id": agent, "messages": "password=hunter22"},
		{"agent_id": agent, "messages": "third", "visibility": "public"},
		{"agent_id": agent, "messages": 7},
		{"agent_id": "not-mine-" + agent, "messages": "x"},
	}
	var res struct {
		Results []struct {
			Index int
			ID    string
			Error *struct{ Code string }
		}
	}
	// Item 3 breaks openapi.json's NewMemory on purpose: only the answer is checked.
	status, out := owner.sendMalformed("POST", "/v1/memories/batch", map[string]any{"items": items})
	if status != http.StatusOK {
		t.Fatalf("batch: status %d, want 200: %s", status, out)
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	want := []string{"", "unprocessable", "", "invalid", "not_found"}
	for i, r := range res.Results {
		got := ""
		if r.Error != nil {
			got = r.Error.Code
		} else if r.ID == "" {
			got = "no id"
		}
		if r.Index != i || got != want[i] {
			t.Errorf("item %d: index %d, error %q; want %q", i, r.Index, got, want[i])
		}
	}
	if n := countEpisodes(t, owner, agent); n != 2 {
		t.Fatalf("%d episodes stored, want the 2 good items", n)
	}

	t.Run("ErrTooMany", func(t *testing.T) {
		many := make([]map[string]any, 11)
		for i := range many {
			many[i] = map[string]any{"agent_id": agent, "messages": fmt.Sprint("item ", i)}
		}
		if status, _ := owner.do("POST", "/v1/memories/batch", map[string]any{"items": many}); status != http.StatusBadRequest {
			t.Fatalf("11 items: status %d, want 400", status)
		}
		if n := countEpisodes(t, owner, agent); n != 2 {
			t.Fatalf("a refused batch stored %d episodes", n-2)
		}
	})
}

func TestList_Pagination(t *testing.T) {
	t.Parallel()
	owner, other, agent := ownerWorld(t)
	want := map[string]bool{}
	for i := 0; i < 7; i++ {
		var a added
		owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": fmt.Sprint("note ", i)}, &a)
		want[a.ID] = true
	}
	seen := map[string]bool{}
	cursor, pages := "", 0
	for {
		var page struct {
			Items      []memory
			NextCursor string `json:"next_cursor"`
			HasMore    bool   `json:"has_more"`
		}
		owner.must(http.StatusOK, "GET", "/v1/memories?limit=3&agent_id="+agent+"&cursor="+url.QueryEscape(cursor), nil, &page)
		pages++
		for _, m := range page.Items {
			if seen[m.ID] {
				t.Fatalf("%s on two pages", m.ID)
			}
			seen[m.ID] = true
		}
		if page.HasMore != (page.NextCursor != "") {
			t.Fatalf("has_more %v with next_cursor %q", page.HasMore, page.NextCursor)
		}
		if !page.HasMore {
			break
		}
		cursor = page.NextCursor
	}
	if len(seen) != 7 || pages != 3 {
		t.Fatalf("saw %d memories on %d pages, want 7 on 3", len(seen), pages)
	}
	// Private memories: another requester sees none of them, and a forged cursor
	// does not help.
	var page struct{ Items []memory }
	other.must(http.StatusOK, "GET", "/v1/memories?agent_id="+agent, nil, &page)
	if len(page.Items) != 0 {
		t.Fatalf("another requester listed %d private memories", len(page.Items))
	}
	for _, bad := range []string{"garbage", "eyJ0IjoiMjAyMCJ9", strings.Repeat("A", 500)} {
		if status, _ := owner.do("GET", "/v1/memories?agent_id="+agent+"&cursor="+bad, nil); status != http.StatusBadRequest {
			t.Errorf("cursor %q: status %d, want 400", bad, status)
		}
	}
	// Above the maximum page size is clamped, not refused (documented).
	var big struct{ Items []memory }
	owner.must(http.StatusOK, "GET", "/v1/memories?limit=100000&agent_id="+agent, nil, &big)
	if len(big.Items) != 7 {
		t.Fatalf("clamped page held %d items", len(big.Items))
	}
}

func TestSearch_CraftedQueryAudited(t *testing.T) {
	t.Parallel()
	owner, other, agent := ownerWorld(t)
	owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "secret plans of the owner"}, nil)
	var res struct{ Episodes []memory }
	other.must(http.StatusOK, "POST", "/v1/memories/search",
		map[string]any{"agent_id": agent, "query": "plans agent:" + agent + " team:ops OR group_id:*"}, &res)
	if len(res.Episodes) != 0 {
		t.Fatalf("a crafted query returned %d private memories", len(res.Episodes))
	}
	var audit struct {
		Events []struct{ Kind, Actor, Space, Reason string }
	}
	admin := client{t: t, base: owner.base, requester: "auditor-" + agent}
	admin.must(http.StatusOK, "GET", "/v1/audit?kind=crafted_query&actor="+other.requester, nil, &audit)
	spaces := map[string]bool{}
	for _, e := range audit.Events {
		spaces[e.Space] = true
	}
	if len(audit.Events) != 2 || !spaces["agent-"+agent+"-private"] || !spaces["team-ops"] {
		t.Fatalf("crafted_query events = %+v, want one for the agent's private space and one for team-ops", audit.Events)
	}
	for _, e := range audit.Events {
		if strings.Contains(e.Reason, "plans") {
			t.Fatal("the audit event stores query text")
		}
	}
}

// TestAllPublicModel runs the deployment of seeds/a4s-memory-public.md: public by
// default, private writes refused.
func TestAllPublicModel(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, nil, nil, func(s *service.Service) {
		s.Auth = access.Policy{AllowPrivate: false}
		s.Limits.DefaultVisibility = "public"
	})
	w := &world{base: srv.URL, t: t, suffix: randomSuffix()}
	neo4jtest.Forget(t, w.suffix)
	owner, other := w.as("owner", "trusted"), w.as("other", "trusted")
	agent := w.id("agent")
	owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	var a added
	owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "shared by default"}, &a)
	if a.GroupID != "agent-"+agent+"-public" {
		t.Fatalf("default write landed in %s, want the public space", a.GroupID)
	}
	other.must(http.StatusOK, "GET", "/v1/memories/"+a.ID, nil, nil)
	if status, _ := owner.do("POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "x", "visibility": "private"}); status != http.StatusForbidden {
		t.Fatalf("a private write: %d, want 403", status)
	}
}
