package graph_test

import (
	"testing"

	"github.com/memgate/memgate/graph"
)

func TestPseudonyms(t *testing.T) {
	acme := graph.Org("acme")
	for _, c := range []struct {
		org        graph.Org
		text, want string
	}{
		{graph.DefaultOrg, "alice", "erased-1"},
		{graph.DefaultOrg, "owner alice -> bob", "owner erased-1 -> bob"},
		{graph.DefaultOrg, "jwt:alice", "jwt:erased-1"},
		{graph.DefaultOrg, "user-alice-shared", "user-erased-1-shared"},
		{graph.DefaultOrg, "with alice until 2026-01-01T00:00:00Z", "with erased-1 until 2026-01-01T00:00:00Z"},
		{graph.DefaultOrg, "agent-alice-private,agent-alice-public", "agent-alice-private,agent-alice-public"}, // an agent's, not hers
		{graph.DefaultOrg, "alice2 malice team-alice alice_x", "alice2 malice team-alice alice_x"},
		{graph.DefaultOrg, "org-acme_user-alice-shared", "org-acme_user-alice-shared"}, // another organization's
		{acme, "jwt:org-acme_alice", "jwt:org-acme_erased-1"},
		{acme, "org-acme_user-alice-shared", "org-acme_user-erased-1-shared"},
		{acme, "user-alice-shared", "user-alice-shared"}, // the implicit organization's
		{acme, "alice is writer", "erased-1 is writer"},
		{acme, "", ""},
	} {
		if got := (graph.Pseudonyms{Org: c.org, Requester: "alice", Pseudonym: "erased-1"}).Apply(c.text); got != c.want {
			t.Errorf("Apply(%q, %q) = %q, want %q", c.org, c.text, got, c.want)
		}
	}
}

// TestPseudonyms_Agents: the agents an erased requester owned are named by
// pseudonyms of their own wherever its own id would be replaced, their spaces too.
func TestPseudonyms_Agents(t *testing.T) {
	acme := graph.Org("acme")
	p := graph.Pseudonyms{Org: acme, Requester: "alice", Pseudonym: "erased-1",
		Agents: graph.AgentPseudonyms("erased-1", []string{"alice-bot", "helper"})}
	for text, want := range map[string]string{
		"alice-bot":                             "erased-1-agent-1",
		"owner alice -> bob of helper":          "owner erased-1 -> bob of erased-1-agent-2",
		"org-acme_agent-alice-bot-private":      "org-acme_agent-erased-1-agent-1-private",
		"org-acme_agent-helper-public":          "org-acme_agent-erased-1-agent-2-public",
		"helper2 org-acme_agent-helper2-public": "helper2 org-acme_agent-helper2-public",
	} {
		if got := p.Apply(text); got != want {
			t.Errorf("Apply(%q) = %q, want %q", text, got, want)
		}
	}
}
