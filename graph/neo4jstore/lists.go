package neo4jstore

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

// The lists of agents, teams and entities.

func (db *DB) ListAgents(ctx context.Context, q graph.AgentQuery) (graph.AgentPage, error) {
	params := map[string]any{"org": string(q.Org), "requester": q.Requester, "all": q.All && q.Owner == "", "owner": nullable(q.Owner),
		"mine": nullable(q.Requester), "limit": int64(q.Page.Limit + 1)}
	if q.All || q.Owner != "" {
		params["mine"] = nil
	}
	if err := cursorParams(q.Page.Cursor, params); err != nil {
		return graph.AgentPage{}, err
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, "agent_list", params)
	if err != nil {
		return graph.AgentPage{}, err
	}
	var out graph.AgentPage
	for i, r := range records {
		if i == q.Page.Limit {
			last := records[i-1]
			out.HasMore, out.NextCursor = true, encodeCursor(tm(last.Values[1]), out.Agents[i-1].Agent.ID)
			break
		}
		relation := graph.RelationNone
		if owns, _ := r.Values[2].(bool); owns {
			relation = graph.RelationOwner
		} else if shared, _ := r.Values[3].(bool); shared {
			relation = graph.RelationShared
		}
		out.Agents = append(out.Agents, graph.ListedAgent{Agent: agentOf(r.Values[0], r.Values[4], r.Values[5]), Relation: relation})
	}
	return out, nil
}

func (db *DB) ListTeams(ctx context.Context, q graph.TeamQuery) (graph.TeamPage, error) {
	params := map[string]any{"org": string(q.Org), "requester": q.Requester, "all": q.All, "mine": nullable(q.Requester),
		"limit": int64(q.Page.Limit + 1)}
	if q.All {
		params["mine"] = nil
	}
	if err := cursorParams(q.Page.Cursor, params); err != nil {
		return graph.TeamPage{}, err
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, "team_list", params)
	if err != nil {
		return graph.TeamPage{}, err
	}
	var out graph.TeamPage
	for i, r := range records {
		if i == q.Page.Limit {
			last := records[i-1]
			out.HasMore, out.NextCursor = true, encodeCursor(tm(last.Values[1]), out.Teams[i-1].Team.Name)
			break
		}
		p := r.Values[0].(neo4j.Node).Props
		out.Teams = append(out.Teams, graph.ListedTeam{Role: graph.Role(str(r.Values[2])),
			Team: &graph.Team{Name: str(p["name"]), CreatedAt: tm(p["created_at"]), OwnerID: str(p["owner_id"])}})
	}
	return out, nil
}

func (db *DB) Entities(ctx context.Context, vis graph.Visible, f graph.EntityFilter, page graph.PageRequest) (graph.EntityPage, error) {
	if err := enumerated(vis); err != nil {
		return graph.EntityPage{}, err
	}
	params := visParams(vis, typeParams(graph.TypeFilter{EntityTypes: f.EntityTypes, Attributes: f.Attributes},
		map[string]any{"name_prefix": f.NamePrefix, "limit": int64(page.Limit + 1), "embeddings": false}))
	if err := nameCursorParams(page.Cursor, params); err != nil {
		return graph.EntityPage{}, err
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, "entity_list", params)
	if err != nil {
		return graph.EntityPage{}, err
	}
	var out graph.EntityPage
	for i, r := range records {
		if i == page.Limit {
			last := out.Entities[i-1]
			out.HasMore, out.NextCursor = true, encodeNameCursor(str(records[i-1].Values[1]), last.UUID)
			break
		}
		out.Entities = append(out.Entities, entityFromRow(r.Values[0]))
	}
	return out, nil
}
