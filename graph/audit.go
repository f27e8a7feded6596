package graph

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Audit event kinds.
const (
	AuditNamespaceDenied   = "namespace_denied"   // a refused write or delete (every 403)
	AuditRequesterDenied   = "requester_denied"   // a host named a requester its key is not bound to
	AuditCraftedQuery      = "crafted_query"      // search text named a space outside the visible set
	AuditPromoted          = "promoted"           // a memory copied into a team or global space
	AuditDeleted           = "deleted"            // a memory or an agent erased
	AuditExpired           = "expired"            // a memory erased by the sweeper once its expires_at passed
	AuditOwnershipChanged  = "ownership_changed"  // an agent created or given to a new owner
	AuditMembershipChanged = "membership_changed" // a team created, a member added, changed or removed
	AuditPromoterChanged   = "promoter_changed"   // the promoter role granted or revoked
	AuditShareGranted      = "share_granted"      // an owner shared an agent's private space
	AuditShareRevoked      = "share_revoked"      // and took it back
	AuditShareExpired      = "share_expired"      // a time-bounded share lapsed, or was first used after it did
	AuditDelegateGranted   = "delegate_granted"   // an owner let another requester write an agent's memories
	AuditDelegateRevoked   = "delegate_revoked"   // and took it back
	AuditQuotaExceeded     = "quota_exceeded"     // a write refused by the public-write quota
	AuditUpdated           = "updated"            // a memory changed in place (a new version)
	AuditVisibilityChanged = "visibility_changed" // a memory moved to another space by its creator
	AuditTeamDissolved     = "team_dissolved"     // a team deleted, its memories back in their creators' private spaces
	AuditConflictResolved  = "conflict_resolved"  // a conflict held for review resolved: keep old, new or both
	AuditRequesterErased   = "requester_erased"   // a requester erased, its id replaced by a pseudonym (the subject)
	AuditTypesChanged      = "types_changed"      // an agent's or a team's entity and edge types set (the reason lists them)
)

// AuditEvent is an :AuditEvent node in its organization's system space. It never holds memory
// content, query text or secrets.
type AuditEvent struct {
	Org       Org       `json:"-"` // whose system space holds it
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	At        time.Time `json:"at"`
	Actor     string    `json:"actor"`   // the requester
	Subject   string    `json:"subject"` // what it is about: an agent, team, principal or memory id
	HostKey   string    `json:"host_key"`
	Space     string    `json:"space,omitempty"` // the group_id concerned
	Reason    string    `json:"reason,omitempty"`
	RequestID string    `json:"request_id,omitempty"`
	// AssertedTeams are the memberships the host asserted for the request
	// (X-Requester-Teams), each name:role.
	AssertedTeams []string `json:"asserted_teams,omitempty"`
}

// AuditFilter selects audit events; empty fields match everything.
type AuditFilter struct {
	Org     Org // the organization whose events are listed
	Subject string
	Actor   string
	Kind    string
	Since   *time.Time
	Until   *time.Time
	Page    PageRequest
}

// AuditLog stores audit events.
type AuditLog interface {
	// RecordAudit commits ev in a transaction of its own.
	RecordAudit(ctx context.Context, ev *AuditEvent) error
	// ListAudit lists events newest first. EINVALID for a foreign cursor.
	ListAudit(ctx context.Context, f AuditFilter) ([]*AuditEvent, string, error)
}

// Pseudonyms are what one erasure replaces in the records it keeps: requester
// Requester of Org by Pseudonym, and each agent the requester owned by a pseudonym of
// its own (Agents: id to pseudonym, AgentPseudonyms), since an agent's id may name its
// owner too.
type Pseudonyms struct {
	Org                  Org
	Requester, Pseudonym string
	Agents               map[string]string
}

// AgentPseudonyms gives each of agents a pseudonym after the requester's:
// pseudonym-agent-1, -2, ... in the order of agents.
func AgentPseudonyms(pseudonym string, agents []string) map[string]string {
	out := make(map[string]string, len(agents))
	for i, a := range agents {
		out[a] = pseudonym + "-agent-" + strconv.Itoa(i+1)
	}
	return out
}

// Apply returns text with every mention of the requester or of one of its agents
// replaced by the same mention of its pseudonym: the id as a word of its own
// (delimited by characters no id holds, as in "owner alice -> bob" or "jwt:alice"),
// with its organization's prefix (an end user's JWT host of a named organization,
// "jwt:org-acme_alice"), the requester's shared space's group_id and its agents'
// spaces' group_ids. Other words that merely contain an id ("alice2", "team-alice")
// stay.
func (p Pseudonyms) Apply(text string) string {
	words := map[string]string{}
	if p.Requester != "" {
		words[p.Requester] = p.Pseudonym
		words[p.Org.Prefix()+p.Requester] = p.Org.Prefix() + p.Pseudonym
		words[p.Org.Shared(p.Requester).GroupID()] = p.Org.Shared(p.Pseudonym).GroupID()
	}
	for a, pa := range p.Agents {
		words[a] = pa
		words[p.Org.Private(a).GroupID()] = p.Org.Private(pa).GroupID()
		words[p.Org.Public(a).GroupID()] = p.Org.Public(pa).GroupID()
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		if !idByte(text[i]) {
			b.WriteByte(text[i])
			i++
			continue
		}
		j := i
		for j < len(text) && idByte(text[j]) {
			j++
		}
		word := text[i:j]
		if to, ok := words[word]; ok {
			word = to
		}
		b.WriteString(word)
		i = j
	}
	return b.String()
}

// idByte reports whether c may be part of an id, an organization's prefix or a
// group_id.
func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
