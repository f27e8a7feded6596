package handlers_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// TestQuota_PublicWrites: with limits.public_writes_per_agent_per_day, an agent's
// public writes over the cap answer 429 quota_exceeded with Retry-After at the next
// UTC day, audited; private writes, other agents and replays are not counted, and two
// replicas share one count, also under concurrent writes.
func TestQuota_PublicWrites(t *testing.T) {
	t.Parallel()
	const limit = 3
	quota := func(s *service.Service) { s.Limits.PublicWritesPerDay = limit }
	replicas := []string{newServerWith(t, matrixKeyring(), nil, quota).URL, newServerWith(t, matrixKeyring(), nil, quota).URL}
	suffix := randomSuffix()
	neo4jtest.Forget(t, suffix)
	as := func(replica int, who, key string) client {
		return client{t: t, base: replicas[replica], key: matrixKeys[key], requester: "qt-" + who + "-" + suffix}
	}
	owner, other, admin := as(0, "owner", "trusted"), as(1, "owner", "trusted"), as(0, "root", "admin")
	agent, second := "qt-a-"+suffix, "qt-b-"+suffix
	for _, a := range []string{agent, second} {
		owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": a}, nil)
	}
	write := func(c client, agent, visibility, text string) (int, http.Header, []byte) {
		t.Helper()
		resp, body := do(t, "POST", c.base+"/v1/memories", map[string]string{
			"Authorization": "Bearer " + c.key, "X-Requester-Id": c.requester, "Content-Type": "application/json",
			"Idempotency-Key": text,
		}, mustJSON(t, map[string]any{"agent_id": agent, "visibility": visibility, "messages": text}))
		return resp.StatusCode, resp.Header, body
	}

	for i := range limit {
		replica := []client{owner, other}[i%2] // the count is shared by both replicas
		if status, _, body := write(replica, agent, "public", "note "+strconv.Itoa(i)); status != http.StatusAccepted {
			t.Fatalf("public write %d: %d %s", i+1, status, body)
		}
	}
	if status, _, body := write(owner, agent, "public", "note 0"); status != http.StatusAccepted {
		t.Errorf("a replay of an accepted write: %d %s, want 202 (a replay is not a new write)", status, body)
	}
	for _, c := range []client{owner, other} {
		status, header, body := write(c, agent, "public", "one too many via "+c.base)
		var e struct{ Error struct{ Code string } }
		_ = json.Unmarshal(body, &e)
		if status != http.StatusTooManyRequests || e.Error.Code != "quota_exceeded" {
			t.Fatalf("public write over the quota: %d %s", status, body)
		}
		now := time.Now().UTC()
		untilMidnight := now.Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now).Seconds()
		retry, err := strconv.Atoi(header.Get("Retry-After"))
		if err != nil || float64(retry) < untilMidnight-5 || float64(retry) > untilMidnight+5 {
			t.Errorf("Retry-After %q, want about %.0f s (the next UTC day)", header.Get("Retry-After"), untilMidnight)
		}
	}
	if status, _, body := write(owner, agent, "private", "a private note"); status != http.StatusAccepted {
		t.Errorf("a private write of the agent over its public quota: %d %s", status, body)
	}
	if status, _, body := write(owner, second, "public", "another agent's note"); status != http.StatusAccepted {
		t.Errorf("another agent's public write: %d %s", status, body)
	}
	var public struct{ Items []memory }
	owner.must(http.StatusOK, "GET", "/v1/memories?space=public&limit=100&agent_id="+agent, nil, &public)
	if len(public.Items) != limit {
		t.Errorf("%d public memories stored, want %d: a refused write stores nothing", len(public.Items), limit)
	}
	var events struct {
		Events []struct{ Kind, Actor, Space string }
	}
	admin.must(http.StatusOK, "GET", "/v1/audit?kind=quota_exceeded&subject="+agent, nil, &events)
	if len(events.Events) != 2 || events.Events[0].Actor != owner.requester || events.Events[0].Space != "agent-"+agent+"-public" {
		t.Errorf("audit of the refusals: %+v, want two quota_exceeded events", events.Events)
	}

	// Concurrent writes through both replicas: exactly the quota is accepted.
	third := "qt-c-" + suffix
	owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": third}, nil)
	var accepted, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			switch status, _, _ := write([]client{owner, other}[i%2], third, "public", "race "+strconv.Itoa(i)); status {
			case http.StatusAccepted:
				accepted.Add(1)
			case http.StatusTooManyRequests:
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	if accepted.Load() != limit || refused.Load() != 10-limit {
		t.Errorf("10 concurrent public writes: %d accepted, %d refused; want %d and %d", accepted.Load(), refused.Load(), limit, 10-limit)
	}
}
