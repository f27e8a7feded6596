package handlers_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// TestShare_Expires: a share granted until a time stops working at the first request
// after it, shows as expired on the agent, and is audited when it lapses (once,
// however many sweep) and when it is used after.
func TestShare_Expires(t *testing.T) {
	t.Parallel()
	var svc *service.Service
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) { svc = s })
	suffix := randomSuffix()
	neo4jtest.Forget(t, suffix)
	as := func(who, key string) client {
		return client{t: t, base: srv.URL, key: matrixKeys[key], requester: "sh-" + who + "-" + suffix}
	}
	owner, carol, mallory, admin := as("owner", "trusted"), as("carol", "trusted"), as("mallory", "trusted"), as("root", "admin")
	agent := "sh-agent-" + suffix
	owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	var m added
	owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "The vault code is kept by Carol."}, &m)
	sharePath := "/v1/agents/" + agent + "/shares/" + carol.requester

	// Refused grants.
	for _, tc := range []struct {
		who       client
		body      any
		malformed bool // breaks openapi.json, so sent past the contract check
		status    int
	}{
		{owner, map[string]any{"expires_at": time.Now().Add(-time.Minute).Format(time.RFC3339)}, false, http.StatusBadRequest},
		{owner, map[string]any{"expires_at": "tomorrow"}, true, http.StatusBadRequest},
		{owner, map[string]any{"until": time.Now().Add(time.Hour).Format(time.RFC3339)}, true, http.StatusBadRequest},
		{mallory, map[string]any{"expires_at": time.Now().Add(time.Hour).Format(time.RFC3339)}, false, http.StatusForbidden},
		{carol, nil, false, http.StatusForbidden},
	} {
		send := tc.who.do
		if tc.malformed {
			send = tc.who.sendMalformed
		}
		if status, body := send("PUT", sharePath, tc.body); status != tc.status {
			t.Errorf("%s granting with %v: %d, want %d: %s", tc.who.requester, tc.body, status, tc.status, body)
		}
	}
	if status, _ := carol.do("GET", "/v1/memories/"+m.ID, nil); status != http.StatusNotFound {
		t.Fatalf("before any grant carol reads the private memory: %d", status)
	}

	until := time.Now().Add(1500 * time.Millisecond)
	owner.must(http.StatusNoContent, "PUT", sharePath, map[string]any{"expires_at": until.Format(time.RFC3339Nano)}, nil)
	type view struct {
		SharedWith []string `json:"shared_with"`
		Shares     []struct {
			Principal string     `json:"principal"`
			ExpiresAt *time.Time `json:"expires_at"`
			Expired   bool       `json:"expired"`
		} `json:"shares"`
	}
	var v view
	owner.must(http.StatusOK, "GET", "/v1/agents/"+agent, nil, &v)
	if len(v.Shares) != 1 || v.Shares[0].Expired || v.Shares[0].ExpiresAt == nil || !v.Shares[0].ExpiresAt.Equal(until) ||
		strings.Join(v.SharedWith, ",") != carol.requester {
		t.Fatalf("agent after the grant: %+v", v)
	}
	if status, _ := carol.do("GET", "/v1/memories/"+m.ID, nil); status != http.StatusOK {
		t.Fatalf("carol reading while the share holds: %d", status)
	}
	if time.Now().After(until) {
		t.Fatal("the checks while the share holds ran past its end")
	}

	// From its end on, the grant gives nothing, without anyone revoking it.
	waitNotFound(t, carol, m.ID, "after her share ended")
	var page struct{ Items []memory }
	carol.must(http.StatusOK, "GET", "/v1/memories?agent_id="+agent, nil, &page)
	if len(page.Items) != 0 {
		t.Errorf("carol lists %d private memories after her share ended", len(page.Items))
	}
	if status, _ := carol.do("GET", "/v1/memories?space=private&agent_id="+agent, nil); status != http.StatusNotFound {
		t.Errorf("carol listing the private space after her share ended: %d, want 404", status)
	}
	v = view{}
	owner.must(http.StatusOK, "GET", "/v1/agents/"+agent, nil, &v)
	if len(v.Shares) != 1 || !v.Shares[0].Expired || len(v.SharedWith) != 0 {
		t.Errorf("agent after the share ended: %+v, want it marked expired and not in shared_with", v)
	}

	type events struct {
		Events []struct{ Actor, Reason, Space string }
	}
	var used events
	admin.must(http.StatusOK, "GET", "/v1/audit?kind=share_expired&actor="+carol.requester, nil, &used)
	if len(used.Events) != 1 || used.Events[0].Reason != "used after it expired" || used.Events[0].Space != "agent-"+agent+"-private" {
		t.Errorf("use of the expired share: audit %+v", used.Events)
	}

	sweepTwice(t, svc)
	var lapsed events
	admin.must(http.StatusOK, "GET", "/v1/audit?kind=share_expired&actor="+service.Sweeper+"&subject="+agent, nil, &lapsed)
	if len(lapsed.Events) != 1 || !strings.Contains(lapsed.Events[0].Reason, carol.requester+" lapsed") {
		t.Errorf("lapse audit: %+v, want one event naming carol", lapsed.Events)
	}

	// Granted again without an end, it works again and lasts.
	owner.must(http.StatusNoContent, "PUT", sharePath, nil, nil)
	if status, _ := carol.do("GET", "/v1/memories/"+m.ID, nil); status != http.StatusOK {
		t.Errorf("carol after a new grant: %d", status)
	}
	v = view{}
	owner.must(http.StatusOK, "GET", "/v1/agents/"+agent, nil, &v)
	if len(v.Shares) != 1 || v.Shares[0].Expired || v.Shares[0].ExpiresAt != nil {
		t.Errorf("agent after a grant without an end: %+v", v)
	}
}

// TestShare_ExpiredUseAuditedOnce: the use of a lapsed share is audited at the first
// list or search by the former grantee about the agent, once, however many follow and
// however many run at once (91 events in 6 s were once written); the sweeper's record
// of the lapse is apart from it. A share granted again and lapsed again is audited
// afresh.
func TestShare_ExpiredUseAuditedOnce(t *testing.T) {
	t.Parallel()
	var svc *service.Service
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) { svc = s })
	suffix := randomSuffix()
	neo4jtest.Forget(t, suffix)
	as := func(who, key string) client {
		return client{t: t, base: srv.URL, key: matrixKeys[key], requester: "sh-" + who + "-" + suffix}
	}
	owner, carol, admin := as("owner", "trusted"), as("carol", "trusted"), as("root", "admin")
	agent := "sh-agent-" + suffix
	owner.must(http.StatusCreated, "POST", "/v1/agents", map[string]any{"id": agent}, nil)
	var m added
	owner.must(http.StatusAccepted, "POST", "/v1/memories", map[string]any{"agent_id": agent, "messages": "The vault code is kept by Carol."}, &m)
	sharePath := "/v1/agents/" + agent + "/shares/" + carol.requester

	type events struct {
		Events []struct{ Actor, Reason, Space string }
	}
	usesAudited := func() int {
		var used events
		admin.must(http.StatusOK, "GET", "/v1/audit?limit=100&kind=share_expired&actor="+carol.requester, nil, &used)
		for _, e := range used.Events {
			if e.Reason != "used after it expired" || e.Space != "agent-"+agent+"-private" {
				t.Errorf("use of the expired share: event %+v", e)
			}
		}
		return len(used.Events)
	}
	reads := []struct{ method, path string }{
		{"GET", "/v1/memories?agent_id=" + agent},
		{"POST", "/v1/memories/search"},
		{"GET", "/v1/facts?agent_id=" + agent},
		{"GET", "/v1/conflicts?agent_id=" + agent},
	}
	read := func(r struct{ method, path string }) {
		var body any
		if r.method == "POST" {
			body = map[string]any{"agent_id": agent, "query": "vault code"}
		}
		carol.must(http.StatusOK, r.method, r.path, body, nil)
	}
	lapse := func() {
		t.Helper()
		until := time.Now().Add(1500 * time.Millisecond)
		owner.must(http.StatusNoContent, "PUT", sharePath, map[string]any{"expires_at": until.Format(time.RFC3339Nano)}, nil)
		if status, _ := carol.do("GET", "/v1/memories/"+m.ID, nil); status != http.StatusOK {
			t.Fatalf("carol reading while the share holds: %d", status)
		}
		read(reads[0]) // while it holds: not a use of a lapsed share
		waitNotFound(t, carol, m.ID, "after her share ended")
	}

	lapse()
	if n := usesAudited(); n != 0 {
		t.Fatalf("%d uses audited before any read after the lapse", n)
	}
	var wg sync.WaitGroup
	for range 3 { // at once, as several replicas would serve them
		for _, r := range reads {
			wg.Go(func() { read(r) })
		}
	}
	wg.Wait()
	for range 3 {
		for _, r := range reads {
			read(r)
		}
	}
	if n := usesAudited(); n != 1 {
		t.Errorf("24 lists and searches after the lapse audited %d uses, want 1", n)
	}
	sweepTwice(t, svc)
	var lapsed events
	admin.must(http.StatusOK, "GET", "/v1/audit?kind=share_expired&actor="+service.Sweeper+"&subject="+agent, nil, &lapsed)
	if len(lapsed.Events) != 1 {
		t.Errorf("lapse audit: %+v, want one event", lapsed.Events)
	}
	for _, r := range reads {
		read(r)
	}
	if n := usesAudited(); n != 1 {
		t.Errorf("reads after the sweep: %d uses audited, want still 1", n)
	}

	// Granted again and lapsed again: the new lapse's first use is audited, once.
	lapse()
	for range 2 {
		for _, r := range reads {
			read(r)
		}
	}
	if n := usesAudited(); n != 2 {
		t.Errorf("after a second grant lapsed and 8 reads: %d uses audited, want 2", n)
	}
}
