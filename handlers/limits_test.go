package handlers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestWriteLimits_OneRule (issue 32, point 1): the service's limits on a write (an
// idempotency key of at most 255 bytes, 1 to memory.batch_max_items memories) are
// one rule, met the same way with the same message by a single REST write, a batch
// and MCP's add_memory; what they refuse stores nothing, and the bounds themselves
// are taken.
func TestWriteLimits_OneRule(t *testing.T) {
	t.Parallel()
	owner, _, agent := ownerWorld(t)
	longKey, keyAtLimit := strings.Repeat("k", 256), strings.Repeat("k", 255)
	const keyMessage = "the idempotency key is longer than 255 bytes"
	item := map[string]any{"agent_id": agent, "messages": "a note"}
	items := func(n int) map[string]any {
		list := make([]any, n)
		for i := range list {
			list[i] = map[string]any{"agent_id": agent, "messages": strings.Repeat("x", i+1)}
		}
		return map[string]any{"items": list}
	}
	// post sends a write; a refused one breaks openapi.json, which states the limits.
	post := func(path, key string, body any, refused bool) (int, string) {
		t.Helper()
		b, _ := json.Marshal(body)
		resp, out := send(t, refused, "POST", owner.base+path, map[string]string{"Authorization": "Bearer " + owner.key,
			"X-Requester-Id": owner.requester, "Idempotency-Key": key, "Content-Type": "application/json"}, string(b))
		var e struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal(out, &e)
		if resp.StatusCode >= 400 && e.Error.Code != "invalid" {
			t.Errorf("POST %s: %d %s, want code invalid", path, resp.StatusCode, out)
		}
		return resp.StatusCode, e.Error.Message
	}
	for _, c := range []struct {
		name, path, key string
		body            any
		want            string
	}{
		{"memory, key too long", "/v1/memories", longKey, item, keyMessage},
		{"batch, key too long", "/v1/memories/batch", longKey, items(1), keyMessage},
		{"batch, too many", "/v1/memories/batch", "", items(11), "a batch holds at most 10 items; got 11"},
		{"batch, none", "/v1/memories/batch", "", items(0), "items must not be empty"},
	} {
		if status, message := post(c.path, c.key, c.body, true); status != http.StatusBadRequest || message != c.want {
			t.Errorf("%s: %d %q, want 400 %q", c.name, status, message, c.want)
		}
	}
	session := mcpSession(t, owner.base, owner.key, owner.requester)
	var refused toolError
	if callTool(t, session, "add_memory", map[string]any{"agent_id": agent, "content": "a note", "idempotency_key": longKey}, &refused) ||
		refused.Error.Code != "invalid" || refused.Error.Message != keyMessage {
		t.Errorf("MCP add_memory, key too long: %+v, want invalid %q", refused.Error, keyMessage)
	}
	if n := countEpisodes(t, owner, agent); n != 0 {
		t.Fatalf("%d memories stored by refused writes", n)
	}

	if status, _ := post("/v1/memories", keyAtLimit, item, false); status != http.StatusAccepted {
		t.Errorf("memory, key of 255 bytes: %d, want 202", status)
	}
	if status, _ := post("/v1/memories/batch", "batch-"+keyAtLimit[6:], items(10), false); status != http.StatusOK {
		t.Errorf("batch of 10, key of 255 bytes: %d, want 200", status)
	}
	var took added
	if !callTool(t, session, "add_memory", map[string]any{"agent_id": agent, "content": "another note", "idempotency_key": "mcp-" + keyAtLimit[4:]}, &took) {
		t.Errorf("MCP add_memory, key of 255 bytes: refused")
	}
	if n := countEpisodes(t, owner, agent); n != 12 {
		t.Errorf("%d memories stored, want 12", n)
	}
}
