package neo4jstore

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

func (db *DB) AuditExpiredShareUse(ctx context.Context, org graph.Org, agent, principal string, ev *graph.AuditEvent) (bool, error) {
	done, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		marked, err := db.txRun(ctx, tx, "share_use_audit", map[string]any{"org": string(org), "agent": agent, "principal": principal})
		if err != nil || len(marked) == 0 {
			return false, err
		}
		return true, db.txAudit(ctx, tx, ev)
	})
	if err != nil {
		return false, err
	}
	return done.(bool), nil
}
