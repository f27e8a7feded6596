package neo4jstore

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

var _ graph.Directory = (*DB)(nil)

// ResolvePrincipal reads the facts about id in org afresh for every call. Calls made
// while another group of them is being read go together in the next read, one query
// for all of them (graph/batch): a read starts only after every call it answers was
// made, so a grant revoked before a request arrived is gone from its principal. A
// call with a consistency token (After) is read alone, with the token's bookmarks:
// waiting for them must hold no other request.
func (db *DB) ResolvePrincipal(ctx context.Context, org graph.Org, id string, asserted ...string) (graph.PrincipalFacts, error) {
	if asserted == nil {
		asserted = []string{}
	}
	ask := principalAsk{org: string(org), id: id, asserted: asserted}
	var fs []graph.PrincipalFacts
	var err error
	if withToken(ctx) {
		fs, err = db.resolveTogether(ctx, []principalAsk{ask})
	} else {
		fs = make([]graph.PrincipalFacts, 1)
		fs[0], err = db.principals.Call(ctx, ask)
	}
	if err != nil {
		return graph.PrincipalFacts{}, db.storeError("principal_resolve", err)
	}
	return fs[0], nil
}

// principalAsk is one call of ResolvePrincipal.
type principalAsk struct {
	org, id  string
	asserted []string
}

// resolveTogether reads the principals asked, in one auto-commit read.
func (db *DB) resolveTogether(ctx context.Context, asks []principalAsk) ([]graph.PrincipalFacts, error) {
	rows := make([]any, len(asks))
	for i, a := range asks {
		rows[i] = map[string]any{"i": int64(i), "org": a.org, "id": a.id, "asserted": a.asserted}
	}
	records, err := db.readOnce(ctx, "principal_resolve", map[string]any{"requests": rows})
	if err != nil {
		return nil, err
	}
	out := make([]graph.PrincipalFacts, len(asks))
	answered := make([]bool, len(asks))
	for _, r := range records {
		i := int(num(r.Values[0]))
		if i < 0 || i >= len(asks) {
			return nil, graph.Errorf(graph.EINTERNAL, "principal_resolve answered a request it was not asked")
		}
		out[i], answered[i] = principalFacts(r.Values[1:]), true
	}
	for _, ok := range answered {
		if !ok {
			return nil, graph.Errorf(graph.EINTERNAL, "principal_resolve left a request unanswered")
		}
	}
	return out, nil
}

// principalFacts reads one row of principal_resolve: promoter, teams, owns, grants,
// asserted.
func principalFacts(v []any) graph.PrincipalFacts {
	f := graph.PrincipalFacts{Teams: map[string]graph.Role{}}
	f.Promoter, _ = v[0].(bool)
	for _, pair := range anyList(v[1]) {
		if kv := anyList(pair); len(kv) == 2 {
			f.Teams[str(kv[0])] = graph.Role(str(kv[1]))
		}
	}
	f.Owns = strList(v[2])
	f.SharedWith, f.ExpiredShares, f.Delegated = []string{}, []string{}, []string{}
	for _, grant := range anyList(v[3]) {
		g := anyList(grant)
		if len(g) != 3 {
			continue
		}
		kind, agent, live := str(g[0]), str(g[1]), g[2] == true
		switch {
		case kind == "SHARED_WITH" && live:
			f.SharedWith = append(f.SharedWith, agent)
		case kind == "SHARED_WITH":
			f.ExpiredShares = append(f.ExpiredShares, agent)
		case kind == "DELEGATED_TO" && live:
			f.Delegated = append(f.Delegated, agent)
		}
	}
	f.Asserted = strList(v[4])
	return f
}

// writeWithAudit runs one named change and its audit event in one transaction.
// ENOTFOUND when the change matched nothing (it returns no row); ECONFLICT when a
// uniqueness constraint refused it.
func (db *DB) writeWithAudit(ctx context.Context, name string, params map[string]any, ev *graph.AuditEvent, notFound, conflict string) ([]*neo4j.Record, error) {
	out, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		records, err := db.txRun(ctx, tx, name, params)
		if err != nil {
			return nil, err
		}
		if notFound != "" && len(records) == 0 {
			return nil, graph.Errorf(graph.ENOTFOUND, "%s", notFound)
		}
		return records, db.txAudit(ctx, tx, ev)
	})
	if isConstraintViolation(err) && conflict != "" {
		return nil, graph.Errorf(graph.ECONFLICT, "%s", conflict)
	}
	if err != nil {
		return nil, err
	}
	records, _ := out.([]*neo4j.Record)
	return records, nil
}

func (db *DB) CreateAgent(ctx context.Context, org graph.Org, a *graph.Agent, ev *graph.AuditEvent) error {
	_, err := db.writeWithAudit(ctx, "agent_create",
		map[string]any{"org": string(org), "id": a.ID, "owner_id": a.OwnerID, "created_at": a.CreatedAt.UTC()},
		ev, "", "agent "+a.ID+" exists")
	return err
}

func (db *DB) GetAgent(ctx context.Context, org graph.Org, id string) (*graph.Agent, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "agent_get", map[string]any{"org": string(org), "id": id})
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, graph.Errorf(graph.ENOTFOUND, "agent not found")
	}
	return agentOf(records[0].Values[0], records[0].Values[1], records[0].Values[2]), nil
}

// agentOf reads an agent node, its _agent_shares and its _agent_delegates.
func agentOf(node, shares, delegates any) *graph.Agent {
	p := node.(neo4j.Node).Props
	a := &graph.Agent{ID: str(p["id"]), OwnerID: str(p["owner_id"]), CreatedAt: tm(p["created_at"]),
		Shares: []graph.Share{}, Delegates: []graph.Delegation{}, Types: typesOf(p)}
	for _, v := range anyList(shares) {
		m, _ := v.(map[string]any)
		expired, _ := m["expired"].(bool)
		a.Shares = append(a.Shares, graph.Share{Principal: str(m["principal"]), GrantedAt: tm(m["granted_at"]),
			ExpiresAt: timePtr(m["expires_at"]), Expired: expired})
	}
	for _, v := range anyList(delegates) {
		m, _ := v.(map[string]any)
		expired, _ := m["expired"].(bool)
		a.Delegates = append(a.Delegates, graph.Delegation{Principal: str(m["principal"]), Role: graph.Role(str(m["role"])),
			GrantedAt: tm(m["granted_at"]), ExpiresAt: timePtr(m["expires_at"]), Expired: expired})
	}
	return a
}

const agentChanged = "the agent changed while this request ran; retry"

func (db *DB) SetOwner(ctx context.Context, org graph.Org, id, expectedOwner, owner string, ev *graph.AuditEvent) error {
	_, err := db.writeWithAudit(ctx, "agent_set_owner",
		map[string]any{"org": string(org), "id": id, "expected_owner": expectedOwner, "owner_id": owner}, ev, agentChanged, "")
	return conflictIfGone(err)
}

func (db *DB) DeleteAgent(ctx context.Context, org graph.Org, id, expectedOwner string, ev *graph.AuditEvent) (int, error) {
	params := map[string]any{"org": string(org), "org_prefix": org.Prefix(), "id": id, "expected_owner": expectedOwner,
		"group_ids": []string{org.Private(id).GroupID(), org.Public(id).GroupID()}}
	erased, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		var last []*neo4j.Record
		// Two statements, so that the second reads the spaces after the first holds
		// their locks (agent_erase_lock says why).
		for _, name := range []string{"agent_erase_lock", "agent_delete"} {
			records, err := db.txRun(ctx, tx, name, params)
			if err != nil {
				return nil, err
			}
			if len(records) == 0 {
				return nil, graph.Errorf(graph.ECONFLICT, agentChanged)
			}
			last = records
		}
		return int(num(last[0].Values[0])), db.txAudit(ctx, tx, ev)
	})
	if err != nil {
		return 0, err
	}
	return erased.(int), nil
}

// conflictIfGone reports a change guarded by the expected owner that matched nothing
// as ECONFLICT: the agent was changed or removed since the decision.
func conflictIfGone(err error) error {
	if graph.ErrorCode(err) == graph.ENOTFOUND {
		return graph.Errorf(graph.ECONFLICT, agentChanged)
	}
	return err
}

func (db *DB) SetShare(ctx context.Context, org graph.Org, agent, principal string, granted bool, expiresAt *time.Time, ev *graph.AuditEvent) error {
	query := "agent_unshare"
	if granted {
		query = "agent_share"
	}
	_, err := db.writeWithAudit(ctx, query, map[string]any{"org": string(org), "agent": agent, "principal": principal, "expires_at": optTime(expiresAt)},
		ev, "agent not found", "")
	return err
}

func (db *DB) SetDelegate(ctx context.Context, org graph.Org, agent, expectedOwner, principal string, role graph.Role, expiresAt *time.Time, ev *graph.AuditEvent) error {
	query, params := "agent_undelegate", map[string]any{"org": string(org), "agent": agent, "expected_owner": expectedOwner, "principal": principal}
	if role != "" {
		query, params["role"], params["expires_at"] = "agent_delegate", string(role), optTime(expiresAt)
	}
	_, err := db.writeWithAudit(ctx, query, params, ev, agentChanged, "")
	if graph.ErrorCode(err) != graph.ENOTFOUND {
		return err
	}
	// Nothing matched: the agent is gone, or its owner changed since the decision.
	if _, gerr := db.GetAgent(ctx, org, agent); gerr != nil {
		return gerr
	}
	return conflictIfGone(err)
}

func (db *DB) LapseShares(ctx context.Context, limit int, audit func(org graph.Org, agent, principal string, expiresAt time.Time) *graph.AuditEvent) (int, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "share_lapsed", map[string]any{"limit": int64(limit)})
	if err != nil {
		return 0, err
	}
	lapsed := 0
	for _, r := range records {
		agent, principal, org := str(r.Values[0]), str(r.Values[1]), graph.Org(str(r.Values[2]))
		done, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
			marked, err := db.txRun(ctx, tx, "share_lapse", map[string]any{"org": string(org), "agent": agent, "principal": principal})
			if err != nil || len(marked) == 0 {
				return false, err
			}
			return true, db.txAudit(ctx, tx, audit(org, agent, principal, tm(marked[0].Values[0])))
		})
		if err != nil {
			return lapsed, err
		}
		if done.(bool) {
			lapsed++
		}
	}
	return lapsed, nil
}

func (db *DB) CreateTeam(ctx context.Context, org graph.Org, name, owner string, ev *graph.AuditEvent) error {
	_, err := db.writeWithAudit(ctx, "team_create", map[string]any{"org": string(org), "name": name, "created_at": time.Now().UTC(), "owner_id": owner},
		ev, "", "team "+name+" exists")
	return err
}

func (db *DB) TeamMemories(ctx context.Context, org graph.Org, team string) (graph.Dissolution, error) {
	params := map[string]any{"org": string(org), "group_id": org.Team(team).GroupID()}
	records, err := db.run(ctx, neo4j.AccessModeRead, "team_memories", params)
	d, _, err := dissolution(org, records, err)
	return d, err
}

// dissolution reads team_memories' answer: the counts, and the moves team_dissolve
// makes.
func dissolution(org graph.Org, records []*neo4j.Record, err error) (graph.Dissolution, []map[string]any, error) {
	if err != nil {
		return graph.Dissolution{}, nil, err
	}
	d, moves := graph.Dissolution{Moved: map[string]int{}}, []map[string]any{}
	for _, r := range records {
		uuids := strList(r.Values[2])
		agent := str(r.Values[0])
		if agent == "" {
			d.Erased += len(uuids)
			continue
		}
		d.Moved[agent] = len(uuids)
		moves = append(moves, map[string]any{"agent": agent, "owner": str(r.Values[1]), "uuids": uuids, "group_id": org.Private(agent).GroupID()})
	}
	return d, moves, nil
}

func (db *DB) DissolveTeam(ctx context.Context, org graph.Org, team string, audit func(graph.Dissolution) *graph.AuditEvent) (graph.Dissolution, error) {
	group := org.Team(team).GroupID()
	out, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		locked, err := db.txRun(ctx, tx, "team_lock", map[string]any{"org": string(org), "name": team, "group_id": group})
		if err != nil {
			return nil, err
		}
		if len(locked) == 0 || num(locked[0].Values[0]) == 0 {
			return nil, graph.Errorf(graph.ENOTFOUND, "team not found")
		}
		records, err := db.txRun(ctx, tx, "team_memories", map[string]any{"org": string(org), "group_id": group})
		d, moves, err := dissolution(org, records, err)
		if err != nil {
			return nil, err
		}
		if _, err := db.txRun(ctx, tx, "team_dissolve", map[string]any{"org": string(org), "name": team, "group_id": group, "moves": moves}); err != nil {
			return nil, err
		}
		return d, db.txAudit(ctx, tx, audit(d))
	})
	if err != nil {
		return graph.Dissolution{}, err
	}
	return out.(graph.Dissolution), nil
}

func (db *DB) GetTeam(ctx context.Context, org graph.Org, name string) (*graph.Team, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "team_get", map[string]any{"org": string(org), "name": name})
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, graph.Errorf(graph.ENOTFOUND, "team not found")
	}
	p := records[0].Values[0].(neo4j.Node).Props
	t := &graph.Team{Name: str(p["name"]), CreatedAt: tm(p["created_at"]), OwnerID: str(p["owner_id"]), Members: map[string]graph.Role{},
		Types: typesOf(p)}
	for _, pair := range anyList(records[0].Values[1]) {
		if kv := anyList(pair); len(kv) == 2 {
			t.Members[str(kv[0])] = graph.Role(str(kv[1]))
		}
	}
	return t, nil
}

func (db *DB) SetMember(ctx context.Context, org graph.Org, team, principal string, role graph.Role, ev *graph.AuditEvent) error {
	query, params := "team_member_remove", map[string]any{"org": string(org), "team": team, "principal": principal}
	if role != "" {
		query, params["role"] = "team_member_set", string(role)
	}
	_, err := db.writeWithAudit(ctx, query, params, ev, "team not found", "")
	return err
}

func (db *DB) SetPromoter(ctx context.Context, org graph.Org, principal string, promoter bool, ev *graph.AuditEvent) error {
	_, err := db.writeWithAudit(ctx, "principal_set_promoter", map[string]any{"org": string(org), "id": principal, "promoter": promoter},
		ev, "", "")
	return err
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

func strList(v any) []string {
	out := []string{}
	for _, x := range anyList(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
