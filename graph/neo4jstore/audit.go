package neo4jstore

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

var _ graph.AuditLog = (*DB)(nil)

func auditParams(ev *graph.AuditEvent) map[string]any {
	var asserted any // none: no property
	if len(ev.AssertedTeams) > 0 {
		asserted = ev.AssertedTeams
	}
	return map[string]any{
		"id": ev.ID, "kind": ev.Kind, "at": ev.At.UTC(), "actor": ev.Actor, "subject": ev.Subject,
		"host_key": ev.HostKey, "space": ev.Space, "reason": ev.Reason, "request_id": ev.RequestID,
		"group_id": ev.Org.System().GroupID(), "asserted_teams": asserted,
	}
}

func (db *DB) RecordAudit(ctx context.Context, ev *graph.AuditEvent) error {
	_, err := db.run(ctx, neo4j.AccessModeWrite, "audit_create", auditParams(ev))
	return err
}

// txAudit writes ev (if any) in the transaction of the change it records.
func (db *DB) txAudit(ctx context.Context, tx neo4j.ManagedTransaction, ev *graph.AuditEvent) error {
	if ev == nil {
		return nil
	}
	_, err := db.txRun(ctx, tx, "audit_create", auditParams(ev))
	return err
}

func (db *DB) ListAudit(ctx context.Context, f graph.AuditFilter) ([]*graph.AuditEvent, string, error) {
	params := map[string]any{
		"kind": nullable(f.Kind), "actor": nullable(f.Actor), "subject": nullable(f.Subject),
		"since": nil, "until": nil, "limit": int64(f.Page.Limit + 1), "group_id": f.Org.System().GroupID(),
	}
	if f.Since != nil {
		params["since"] = f.Since.UTC()
	}
	if f.Until != nil {
		params["until"] = f.Until.UTC()
	}
	if err := cursorParams(f.Page.Cursor, params); err != nil {
		return nil, "", err
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, "audit_list", params)
	if err != nil {
		return nil, "", err
	}
	var out []*graph.AuditEvent
	for i, r := range records {
		if i == f.Page.Limit {
			last := out[len(out)-1]
			return out, encodeCursor(last.At, last.ID), nil
		}
		p := r.Values[0].(neo4j.Node).Props
		out = append(out, &graph.AuditEvent{
			Org: f.Org, ID: str(p["id"]), Kind: str(p["kind"]), At: tm(p["at"]), Actor: str(p["actor"]),
			Subject: str(p["subject"]), HostKey: str(p["host_key"]), Space: str(p["space"]),
			Reason: str(p["reason"]), RequestID: str(p["request_id"]),
		})
		if teams := strList(p["asserted_teams"]); len(teams) > 0 {
			out[len(out)-1].AssertedTeams = teams
		}
	}
	return out, "", nil
}
