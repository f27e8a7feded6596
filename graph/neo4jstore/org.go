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
		n, err := db.autoCommit(ctx, step.name, params)
		if err != nil {
			return out, err
		}
		*step.count = n
	}
	return out, nil
}

// autoCommit runs one named query that commits in batches of its own (CALL { } IN
// TRANSACTIONS), which a managed transaction cannot hold, and returns its one count.
func (db *DB) autoCommit(ctx context.Context, name string, params map[string]any) (int, error) {
	session := db.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: db.database, AccessMode: neo4j.AccessModeWrite,
		BookmarkManager: db.bookmarksFor(ctx)})
	defer session.Close(ctx)
	res, err := session.Run(ctx, db.queries.Get(name), params)
	if err != nil {
		return 0, db.storeError(name, err)
	}
	record, err := res.Single(ctx)
	if err != nil {
		return 0, db.storeError(name, err)
	}
	return int(num(record.Values[0])), nil
}
