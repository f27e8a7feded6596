package neo4jstore

import (
	"context"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

// erasing is one requester's erasure: the parameters its queries share, and the
// spaces it empties.
type erasing struct {
	org           graph.Org
	id, pseudonym string
	agents        []string
}

// agentPseudonyms are the pseudonyms of the requester's agents, as the query map
// $agent_pseudonyms takes them.
func agentPseudonyms(e erasing) map[string]any {
	out := map[string]any{}
	for a, p := range graph.AgentPseudonyms(e.pseudonym, e.agents) {
		out[a] = p
	}
	return out
}

func (e erasing) params() map[string]any {
	groups := []string{}
	for _, a := range e.agents {
		groups = append(groups, e.org.Private(a).GroupID(), e.org.Public(a).GroupID())
	}
	shared := e.org.Shared(e.id).GroupID()
	return map[string]any{
		"org": string(e.org), "org_prefix": e.org.Prefix(), "id": e.id, "pseudonym": e.pseudonym,
		"group_ids": append(groups, shared), "shared": shared, "shared_pseudonym": e.org.Shared(e.pseudonym).GroupID(),
		"jwt_host": jwtHost(e.org, e.id), "jwt_pseudonym": jwtHost(e.org, e.pseudonym),
		"system": e.org.System().GroupID(), "agents": nonNil(e.agents), "agent_pseudonyms": agentPseudonyms(e),
	}
}

// jwtHost is the host name of requester id's requests with its end-user JWT (as
// access names it: "jwt:" and the id with its organization's prefix), recorded on
// what it wrote.
func jwtHost(org graph.Org, id string) string { return "jwt:" + org.Prefix() + id }

// txRunner runs a named query in the transaction at hand.
type txRunner func(name string, params map[string]any) ([]*neo4j.Record, error)

func (db *DB) EraseRequester(ctx context.Context, org graph.Org, id, pseudonym string, dryRun bool, audit func(graph.Erasure) *graph.AuditEvent) (graph.Erasure, error) {
	er := erasing{org: org, id: id, pseudonym: pseudonym}
	work := func(tx neo4j.ManagedTransaction) (any, error) {
		run := func(name string, params map[string]any) ([]*neo4j.Record, error) {
			return db.txRun(ctx, tx, name, params)
		}
		agents, err := requesterAgents(run, er)
		if err != nil {
			return nil, err
		}
		er.agents = agents
		if !dryRun {
			if err := lockRequester(run, er); err != nil {
				return nil, err
			}
		}
		counts, events, err := erasureCounts(run, er)
		if err != nil {
			return nil, err
		}
		if counts.Empty() {
			return nil, graph.Errorf(graph.ENOTFOUND, "requester not found")
		}
		if dryRun {
			return counts, nil
		}
		return counts, eraseRequester(run, er, events, audit(counts), func(ev *graph.AuditEvent) error { return db.txAudit(ctx, tx, ev) })
	}
	var out any
	var err error
	if dryRun {
		out, err = db.inRead(ctx, work)
	} else {
		out, err = db.inWrite(ctx, work)
	}
	if err != nil {
		return graph.Erasure{}, err
	}
	return out.(graph.Erasure), nil
}

func requesterAgents(run txRunner, er erasing) ([]string, error) {
	records, err := run("requester_agents", er.params())
	if err != nil {
		return nil, err
	}
	agents := []string{}
	for _, r := range records {
		agents = append(agents, str(r.Values[0]))
	}
	return agents, nil
}

// lockRequester takes the erasure's locks: each agent's and its spaces' (as
// DeleteAgent does), then the principal's and its shared space's. An agent given to
// another owner, or a new one created, while the locks were taken makes it ECONFLICT.
func lockRequester(run txRunner, er erasing) error {
	for _, a := range er.agents {
		if _, err := run("agent_erase_lock", agentErasure(er, a)); err != nil {
			return err
		}
	}
	if _, err := run("requester_erase_lock", er.params()); err != nil {
		return err
	}
	again, err := requesterAgents(run, er)
	if err != nil {
		return err
	}
	if !slices.Equal(again, er.agents) {
		return graph.Errorf(graph.ECONFLICT, "the requester's agents changed while this request ran; retry")
	}
	return nil
}

// agentErasure is the parameters of agent_erase_lock and agent_delete for one of the
// requester's agents.
func agentErasure(er erasing, agent string) map[string]any {
	return map[string]any{"org": string(er.org), "org_prefix": er.org.Prefix(), "id": agent, "expected_owner": er.id,
		"group_ids": []string{er.org.Private(agent).GroupID(), er.org.Public(agent).GroupID()}}
}

// erasureCounts counts what the erasure erases, and returns the audit events naming
// the requester as they are to be rewritten.
func erasureCounts(run txRunner, er erasing) (graph.Erasure, []map[string]any, error) {
	p := er.params()
	records, err := run("requester_erasure", p)
	if err != nil {
		return graph.Erasure{}, nil, err
	}
	r := records[0]
	var e graph.Erasure
	for i, n := range []*int{&e.Agents, &e.Memories, &e.Versions, &e.Entities, &e.Facts, &e.Conflicts, &e.Shares, &e.Memberships} {
		*n = int(num(r.Values[i]))
	}
	e.Promoter, _ = r.Values[8].(bool)
	e.Teams, e.Pseudonymized = int(num(r.Values[9])), int(num(r.Values[10]))
	e.Principal, _ = r.Values[11].(bool)
	e.Delegations = int(num(r.Values[12]))

	found, err := run("requester_audit_events", p)
	if err != nil {
		return graph.Erasure{}, nil, err
	}
	events := []map[string]any{}
	for _, r := range found {
		ev, changed := map[string]any{"id": r.Values[0]}, false
		ps := graph.Pseudonyms{Org: er.org, Requester: er.id, Pseudonym: er.pseudonym, Agents: graph.AgentPseudonyms(er.pseudonym, er.agents)}
		for i, field := range []string{"actor", "subject", "host_key", "space", "reason"} {
			was := str(r.Values[i+1])
			now := ps.Apply(was)
			ev[field], changed = now, changed || now != was
		}
		if changed {
			events = append(events, ev)
		}
	}
	e.AuditEvents = len(events)
	return e, events, nil
}

// eraseRequester makes the changes erasureCounts counted, under lockRequester's
// locks, and records ev.
func eraseRequester(run txRunner, er erasing, events []map[string]any, ev *graph.AuditEvent, record func(*graph.AuditEvent) error) error {
	for _, a := range er.agents {
		deleted, err := run("agent_delete", agentErasure(er, a))
		if err != nil {
			return err
		}
		if len(deleted) == 0 {
			return graph.Errorf(graph.ECONFLICT, "the requester's agents changed while this request ran; retry")
		}
	}
	p := er.params()
	if _, err := run("requester_pseudonymize", p); err != nil {
		return err
	}
	for batch := range slices.Chunk(events, 1000) {
		p["events"] = batch
		if _, err := run("requester_audit_rewrite", p); err != nil {
			return err
		}
	}
	if _, err := run("requester_erase", p); err != nil {
		return err
	}
	return record(ev)
}

// inRead runs fn in one managed read transaction, retried by the driver on transient
// errors.
func (db *DB) inRead(ctx context.Context, fn func(tx neo4j.ManagedTransaction) (any, error)) (any, error) {
	return db.inTx(ctx, neo4j.AccessModeRead, fn)
}
