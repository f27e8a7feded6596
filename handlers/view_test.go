package handlers_test

import (
	"net/http"
	"slices"
	"testing"
)

// TestAgentView: listing an agent's memories covers every space the requester sees for
// it (private, public, its teams, global), a space filter narrows it, a space or a
// search scope the requester cannot read answers 404, and a known path asked with
// another method answers 405.
func TestAgentView(t *testing.T) {
	t.Parallel()
	srv := newServer(t, matrixKeyring())
	w := newTeamWorld(t, srv.URL, "av")
	owner, other, admin, agent, team := w.owner, w.other, w.admin, w.agent, w.team
	admin.must(http.StatusNoContent, "PUT", "/v1/promoters/"+owner.requester, nil, nil)

	ids := map[string]string{}
	for _, v := range []string{"private", "public", "team"} {
		body := map[string]any{"agent_id": agent, "visibility": v, "messages": "A " + v + " note."}
		if v == "team" {
			body["team"] = team
		}
		var a added
		owner.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
		ids[v] = a.ID
	}
	var copied memory
	owner.must(http.StatusAccepted, "POST", "/v1/memories/"+ids["public"]+"/promote", map[string]any{"target": "global"}, &copied)
	ids["global"] = copied.ID

	list := func(c client, query string) []string {
		var page struct{ Items []memory }
		c.must(http.StatusOK, "GET", "/v1/memories?limit=100&agent_id="+agent+query, nil, &page)
		var out []string
		for v, id := range ids {
			if slices.ContainsFunc(page.Items, func(m memory) bool { return m.ID == id }) {
				out = append(out, v)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		who   client
		query string
		want  []string
	}{
		{owner, "", []string{"global", "private", "public", "team"}},
		{owner, "&space=team:" + team, []string{"team"}},
		{owner, "&space=global", []string{"global"}},
		{owner, "&space=private", []string{"private"}},
		{other, "", []string{"global", "public"}},
		{other, "&space=public", []string{"public"}},
	} {
		if got := list(tc.who, tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("%s lists %q: %v, want %v", tc.who.requester, tc.query, got, tc.want)
		}
	}

	// Spaces and scopes the other requester cannot read do not exist for it.
	for _, path := range []string{
		"/v1/memories?agent_id=" + agent + "&space=team:" + team,
		"/v1/memories?agent_id=" + agent + "&space=private",
		"/v1/facts?agent_id=" + agent + "&space=team:" + team,
		"/v1/facts?agent_id=" + agent + "&space=private",
	} {
		if status, body := other.do("GET", path, nil); status != http.StatusNotFound {
			t.Errorf("other GET %s: %d %s, want 404", path, status, body)
		}
	}
	owner.must(http.StatusOK, "GET", "/v1/facts?agent_id="+agent+"&space=team:"+team, nil, nil)
	if status, body := other.do("POST", "/v1/memories/search", map[string]any{"agent_id": agent, "query": "note",
		"scopes": []string{"team:" + team}}); status != http.StatusNotFound {
		t.Errorf("other searching with a team scope it cannot read: %d %s, want 404", status, body)
	}
	owner.must(http.StatusOK, "POST", "/v1/memories/search", map[string]any{"agent_id": agent, "query": "note",
		"scopes": []string{"team:" + team}}, nil)

	// A known path with a method it does not take: 405 with Allow, in the error shape.
	for _, tc := range []struct{ method, path, allow string }{
		{"PUT", "/v1/memories", "GET, POST"},
		{"DELETE", "/v1/facts", "GET, POST"},
		{"POST", "/v1/memories/" + ids["private"], "DELETE, GET, PATCH"},
	} {
		resp, body := doMalformed(t, tc.method, srv.URL+tc.path, map[string]string{
			"Authorization": "Bearer " + owner.key, "X-Requester-Id": owner.requester}, "")
		mustErrorBody(t, resp, body, http.StatusMethodNotAllowed, "invalid")
		if got := resp.Header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
	if resp, body := doMalformed(t, "GET", srv.URL+"/v1/no-such-route", map[string]string{
		"Authorization": "Bearer " + owner.key, "X-Requester-Id": owner.requester}, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown path: %d %s, want 404", resp.StatusCode, body)
	}
}
