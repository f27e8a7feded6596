package handlers_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/memgate/memgate/service"
)

// TestVisibilityRules: a public or team write whose content matches a rule lands in
// the agent's private space, and the answer and the memory name the rule; a rule never
// widens a private write, and what it narrowed is hidden from everyone else.
func TestVisibilityRules(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) {
		s.Limits.VisibilityRules = []service.VisibilityRule{
			{Name: "ssn", Pattern: regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)},
			{Name: "confidential", Pattern: regexp.MustCompile(`(?i)\bconfidential\b`)},
		}
	})
	w := newTeamWorld(t, srv.URL, "vr")
	owner, other, agent, team := w.owner, w.other, w.agent, w.team

	type accepted struct {
		ID             string `json:"id"`
		GroupID        string `json:"group_id"`
		VisibilityRule string `json:"visibility_rule"`
	}
	private, public, teamSpace := "agent-"+agent+"-private", "agent-"+agent+"-public", "team-"+team
	for _, tc := range []struct {
		visibility, text string
		wantGroup        string
		wantRule         string
	}{
		{"public", "My SSN is 123-45-6789.", private, "ssn"},
		{"public", "This plan is CONFIDENTIAL until launch.", private, "confidential"},
		{"team", "Confidential: the merger closes Friday.", private, "confidential"},
		{"public", "The office closes at 6 pm.", public, ""},
		{"team", "The team lunch is on Friday.", teamSpace, ""},
		{"private", "My SSN is 987-65-4321.", private, ""}, // already private: no rule applies
	} {
		body := map[string]any{"agent_id": agent, "visibility": tc.visibility, "messages": tc.text}
		if tc.visibility == "team" {
			body["team"] = team
		}
		var a accepted
		owner.must(http.StatusAccepted, "POST", "/v1/memories", body, &a)
		if a.GroupID != tc.wantGroup || a.VisibilityRule != tc.wantRule {
			t.Errorf("%s %q: stored in %s by rule %q, want %s by %q", tc.visibility, tc.text, a.GroupID, a.VisibilityRule, tc.wantGroup, tc.wantRule)
		}
		var m struct {
			GroupID        string `json:"group_id"`
			VisibilityRule string `json:"visibility_rule"`
		}
		owner.must(http.StatusOK, "GET", "/v1/memories/"+a.ID, nil, &m)
		if m.GroupID != tc.wantGroup || m.VisibilityRule != tc.wantRule {
			t.Errorf("%q read back: %+v", tc.text, m)
		}
		status, _ := other.do("GET", "/v1/memories/"+a.ID, nil)
		if wantVisible := tc.wantGroup == public; (status == http.StatusOK) != wantVisible {
			t.Errorf("%q: another requester reads it with %d (public: %v)", tc.text, status, wantVisible)
		}
	}
}
