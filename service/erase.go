package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// RequesterErasure is what erasing a requester erased, or would, and the pseudonym
// that replaced its id ("" in a dry run, which chooses none).
type RequesterErasure struct {
	graph.Erasure
	Pseudonym string
}

// EraseRequester erases requester id of the caller's organization (an admin host, or
// the requester itself through its own end user's JWT; anyone else gets an audited
// EFORBIDDEN, whether or not id exists): every agent it owns with both of its spaces,
// its shared space, its grants, memberships and promoter role; the teams it owned
// stay, owned by a pseudonym chosen for this erasure, which also replaces its id in
// every record of it that stays (memories of other spaces it wrote, changed, promoted
// or resolved, and the organization's audit events). With dryRun it only counts.
// ENOTFOUND when there is nothing of id.
func (s *Service) EraseRequester(ctx context.Context, c Call, id string, dryRun bool) (_ RequesterErasure, err error) {
	ctx, end := s.span(ctx, "EraseRequester", c)
	defer func() { end(err) }()
	if err := graph.CheckID("id", id); err != nil {
		return RequesterErasure{}, err
	}
	if d := s.Auth.EraseRequester(c.P, id); d.Effect != access.Allow {
		return RequesterErasure{}, s.deny(ctx, c, id, "", d.Reason)
	}
	if dryRun {
		e, err := s.Dir.EraseRequester(ctx, c.P.Org, id, "", true, nil)
		return RequesterErasure{Erasure: e}, err
	}
	pseudonym, err := newPseudonym()
	if err != nil {
		return RequesterErasure{}, err
	}
	e, err := s.Dir.EraseRequester(ctx, c.P.Org, id, pseudonym, false, func(e graph.Erasure) *graph.AuditEvent {
		ev := s.event(c, graph.AuditRequesterErased, pseudonym, c.P.Org.Shared(pseudonym).GroupID(),
			fmt.Sprintf("%d agents, %d memories, %d shares, %d memberships erased; %d teams, %d memories and %d audit events kept under the pseudonym",
				e.Agents, e.Memories, e.Shares, e.Memberships, e.Teams, e.Pseudonymized, e.AuditEvents))
		// Self-erased: the event names the pseudonym, never the id.
		ps := graph.Pseudonyms{Org: c.P.Org, Requester: id, Pseudonym: pseudonym}
		ev.Actor, ev.HostKey = ps.Apply(ev.Actor), ps.Apply(ev.HostKey)
		return ev
	})
	if err != nil {
		return RequesterErasure{}, err
	}
	return RequesterErasure{Erasure: e, Pseudonym: pseudonym}, nil
}

// newPseudonym is a fresh pseudonym for one erasure: graph.PseudonymPrefix and 16
// random hex digits, an id of the form no credential may name.
func newPseudonym() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", graph.Wrap(graph.EINTERNAL, err, "internal error")
	}
	return graph.PseudonymPrefix + hex.EncodeToString(b), nil
}
