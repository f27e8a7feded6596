package service

import (
	"testing"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

type hostList []access.Host

func (l hostList) Host(name string) (access.Host, bool) {
	for _, h := range l {
		if h.Name == name {
			return h, true
		}
	}
	return access.Host{}, false
}

// TestWebhookKeyHolds: an agent's or team's webhook is sent only while the host key
// that registered it may still act for its requester in its organization.
func TestWebhookKeyHolds(t *testing.T) {
	acme := graph.Org("acme")
	hosts := hostList{
		{Name: "backend", Org: acme, Trusted: true, Requesters: []string{"*"}},
		{Name: "plugin", Org: acme, Requesters: []string{"app1-*"}},
		{Name: "moved", Org: "globex", Trusted: true, Requesters: []string{"*"}},
		{Name: "platform", Org: "ops", Trusted: true, Admin: true, Platform: true, Requesters: []string{"*"}},
	}
	for _, c := range []struct {
		name, key, requester string
		hosts                Hosts
		want                 bool
	}{
		{"configured", "backend", "alice", hosts, true},
		{"bound to the requester", "plugin", "app1-alice", hosts, true},
		{"platform key", "platform", "alice", hosts, true},
		{"an end user's JWT", "jwt:org-acme_alice", "alice", hosts, true},
		{"removed from the configuration", "gone", "alice", hosts, false},
		{"bound away from the requester", "plugin", "alice", hosts, false},
		{"now another organization's", "moved", "alice", hosts, false},
		{"no hosts known", "backend", "alice", nil, false},
	} {
		s := &Service{Hosts: c.hosts}
		if got := s.keyHolds(&graph.Webhook{Org: acme, Requester: c.requester, HostKey: c.key}); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
