package neo4jstore

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

// OrgMove is what moving the implicit organization into a named one moved.
type OrgMove struct {
	Agents, Teams, Principals int
	Nodes, Relationships      int
}

// MoveIntoOrg moves everything of the implicit organization (a database written
// before organizations were configured) into org: every group_id gains org's prefix,
// every agent, team and requester becomes org's. It refuses (ECONFLICT) when an agent
// id, a team name or a requester id is used in both, and must run while no memgate
// serves the database. It runs in batches; run again after an interruption, it
// finishes the move.
func (db *DB) MoveIntoOrg(ctx context.Context, org graph.Org) (OrgMove, error) {
	if err := graph.CheckOrg("org", string(org)); err != nil {
		return OrgMove{}, err
	}
	params := map[string]any{"org": string(org), "prefix": org.Prefix()}
	check, err := db.run(ctx, neo4j.AccessModeRead, "org_move_check", params)
	if err != nil {
		return OrgMove{}, err
	}
	if taken := num(check[0].Values[0]); taken > 0 {
		return OrgMove{}, graph.Errorf(graph.ECONFLICT, "%d agent ids, team names or requester ids of the implicit organization are used in organization %s too; the move would merge two under one id", taken, org)
	}
	out := OrgMove{Agents: int(num(check[0].Values[1])), Teams: int(num(check[0].Values[2])), Principals: int(num(check[0].Values[3]))}
	for _, step := range []struct {
		name  string
		count *int
	}{{"org_move_nodes", &out.Nodes}, {"org_move_edges", &out.Relationships}} {
		// Each commits in batches of its own (CALL { } IN TRANSACTIONS), which a
		// managed transaction cannot hold, and answers one count.
		records, err := db.autoCommit(ctx, neo4j.AccessModeWrite, step.name, params)
		if err != nil {
			return out, db.storeError(step.name, err)
		}
		if len(records) != 1 {
			return out, graph.Errorf(graph.EINTERNAL, "query %s answered %d rows, not one", step.name, len(records))
		}
		*step.count = int(num(records[0].Values[0]))
	}
	return out, nil
}
