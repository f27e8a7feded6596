package neo4jstore

import (
	"context"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/cypher"
	"github.com/memgate/memgate/graph"
)

var (
	_ graph.Queue     = (*DB)(nil)
	_ graph.Knowledge = (*DB)(nil)
)

var errLeaseLost = graph.Errorf(graph.ECONFLICT, "the lease on this episode was lost")

// claimWindow is how many times n of the oldest claimable episodes a claim of n
// chooses from at random (episode_claim). Measured with 4 processes of 8 workers
// (BENCHMARKS.md, issue 35): the oldest n alone, 15.6 lease conflicts/s; 4n, 7.7/s
// (same load) and 6.7/s on a quieter machine; 16n, 1.6/s there, at the same rate.
// An episode may wait behind up to 16n-1 younger heads for a claim or two.
const claimWindow = 16

func (db *DB) Claim(ctx context.Context, worker, scope string, lease time.Duration, n, context int) ([]graph.Claimed, int, error) {
	now := time.Now().UTC()
	records, err := db.run(ctx, neo4j.AccessModeWrite, "episode_claim", map[string]any{
		"scope": scope, "n": int64(n), "window": int64(claimWindow * n), "worker": worker, "now": now, "lease_until": now.Add(lease),
		"context": int64(context),
	})
	if err != nil {
		return nil, 0, err
	}
	out, taken := make([]graph.Claimed, 0, len(records)), 0
	groups := map[string]bool{}
	for _, r := range records {
		if r.Values[0] != true { // another worker took it between the query's two reads
			taken++
			continue
		}
		c := graph.Claimed{Episode: episodeFromNode(r.Values[1].(neo4j.Node))}
		for _, p := range anyList(r.Values[2]) {
			c.Previous = append(c.Previous, episodeFromNode(p.(neo4j.Node)))
		}
		out = append(out, c)
		groups[c.Episode.GroupID] = true
	}
	if len(out) == 0 {
		return out, taken, nil
	}
	types, err := db.spaceTypes(ctx, groups)
	if err != nil {
		// The episodes are leased: their leases expire and they are claimed again.
		return nil, 0, err
	}
	for i := range out {
		out[i].Types = types[out[i].Episode.GroupID]
	}
	return out, taken, nil
}

// spaceTypes are the types the owners of the spaces groups chose (space_types_get),
// by group_id; none for a space whose owner chose none.
func (db *DB) spaceTypes(ctx context.Context, groups map[string]bool) (map[string]*graph.SpaceTypes, error) {
	var spaces []map[string]any
	for g := range groups {
		s, ok := graph.ParseGroupID(g)
		if !ok || (s.Agent == "" && s.Team == "") {
			continue
		}
		spaces = append(spaces, map[string]any{"group_id": g, "org": string(s.Org), "agent": nullable(s.Agent), "team": nullable(s.Team)})
	}
	if len(spaces) == 0 {
		return nil, nil
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, "space_types_get", map[string]any{"spaces": spaces})
	if err != nil {
		return nil, err
	}
	out := map[string]*graph.SpaceTypes{}
	for _, r := range records {
		if r.Values[1] == nil && r.Values[2] == nil {
			continue
		}
		t := &graph.SpaceTypes{}
		if r.Values[1] != nil {
			t.EntityTypes = append([]string{}, strList(r.Values[1])...)
		}
		if r.Values[2] != nil {
			t.EdgeTypes = append([]string{}, strList(r.Values[2])...)
		}
		out[str(r.Values[0])] = t
	}
	return out, nil
}

// SetSpaceTypes sets the types of space, an agent's (private or public: both of the
// agent's) or a team's, on the agent or team the decision read (graph.TypesGuard);
// ENOTFOUND when it does not exist, ECONFLICT when it is not that one any more.
func (db *DB) SetSpaceTypes(ctx context.Context, space graph.Space, guard graph.TypesGuard, t graph.SpaceTypes, ev *graph.AuditEvent) error {
	if space.Agent == "" && space.Team == "" {
		return graph.Errorf(graph.EINVALID, "only an agent's or a team's spaces have types of their own")
	}
	list := func(l []string) any {
		if l == nil {
			return nil
		}
		return l
	}
	agent, team := nullable(space.Agent), nullable(space.Team)
	if space.Kind == graph.SpaceTeam {
		agent = nil
	} else {
		team = nil
	}
	params := map[string]any{"org": string(space.Org), "agent": agent, "team": team, "created_at": guard.CreatedAt,
		"expected_owner": nullable(guard.Owner), "entity_types": list(t.EntityTypes), "edge_types": list(t.EdgeTypes)}
	_, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		records, err := db.txRun(ctx, tx, "space_types_set", params)
		if err != nil {
			return nil, err
		}
		if len(records) == 0 {
			return nil, graph.Errorf(graph.ENOTFOUND, "not found")
		}
		if same, _ := records[0].Values[0].(bool); !same {
			if space.Kind == graph.SpaceTeam {
				return nil, graph.Errorf(graph.ECONFLICT, "the team changed while this request ran; retry")
			}
			return nil, graph.Errorf(graph.ECONFLICT, agentChanged)
		}
		return nil, db.txAudit(ctx, tx, ev)
	})
	return err
}

// typesOf reads the types an agent or team node holds (space_types_set); nil when
// none were chosen.
func typesOf(props map[string]any) *graph.SpaceTypes {
	entity, edge := props["entity_types"], props["edge_types"]
	if entity == nil && edge == nil {
		return nil
	}
	names := func(v any) []string {
		if v == nil {
			return nil
		}
		out := []string{}
		for _, n := range anyList(v) {
			out = append(out, str(n))
		}
		return out
	}
	return &graph.SpaceTypes{EntityTypes: names(entity), EdgeTypes: names(edge)}
}

func (db *DB) Renew(ctx context.Context, id, worker string, lease time.Duration) error {
	records, err := db.run(ctx, neo4j.AccessModeWrite, "episode_lease_renew", map[string]any{
		"uuid": id, "worker": worker, "lease_until": time.Now().UTC().Add(lease),
	})
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return errLeaseLost
	}
	return nil
}

func (db *DB) Release(ctx context.Context, id, worker, reason string, retryAt *time.Time, cost graph.Cost) error {
	var retry any
	if retryAt != nil {
		retry = retryAt.UTC()
	}
	records, err := db.run(ctx, neo4j.AccessModeWrite, "episode_release", map[string]any{
		"uuid": id, "worker": worker, "reason": reason, "retry_at": retry, "cost": costProps(cost),
	})
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return errLeaseLost
	}
	return nil
}

func (db *DB) Return(ctx context.Context, id, worker string, cost graph.Cost) error {
	records, err := db.run(ctx, neo4j.AccessModeWrite, "episode_return", map[string]any{"uuid": id, "worker": worker,
		"cost": costProps(cost)})
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return errLeaseLost
	}
	return nil
}

func (db *DB) Complete(ctx context.Context, worker string, ws []*graph.GraphWrite) ([]error, error) {
	now := time.Now().UTC()
	results := make([]error, len(ws))
	_, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		extracted := make([]map[string]any, len(ws))
		for i, w := range ws {
			extracted[i] = map[string]any{"uuid": w.Episode.UUID, "group_id": w.Episode.GroupID, "content_hash": w.Episode.ContentHash}
		}
		records, err := db.txRun(ctx, tx, "episode_lease_check", map[string]any{"episodes": extracted, "worker": worker})
		if err != nil {
			return nil, err
		}
		held := map[string]bool{}
		for _, r := range records {
			held[str(r.Values[0])] = r.Values[1] == true
		}
		var entities []*graph.EntityNode
		var facts []*graph.Fact
		var conflicts []*graph.Conflict
		mentions, done, charged := []map[string]any{}, []map[string]any{}, []map[string]any{}
		for i, w := range ws {
			results[i] = nil
			if !held[w.Episode.UUID] {
				results[i] = errLeaseLost
				charged = append(charged, map[string]any{"uuid": w.Episode.UUID, "cost": costProps(w.Cost)})
				continue
			}
			entities = append(entities, w.Entities...)
			facts = append(facts, w.Facts...)
			conflicts = append(conflicts, w.Conflicts...)
			for _, m := range w.Mentions {
				mentions = append(mentions, map[string]any{"episode": w.Episode.UUID, "entity": m.Entity, "description": m.Description})
			}
			edges := make([]string, len(w.Facts))
			for j, f := range w.Facts {
				edges[j] = f.UUID
			}
			// group_id: the space whose next episode the save makes claimable (queuedIn).
			done = append(done, map[string]any{"uuid": w.Episode.UUID, "group_id": w.Episode.GroupID, "entity_edges": edges,
				"context": nonNil(w.Context), "cost": costProps(w.Cost), "embedding": floats(w.Embedding),
				"turn_embedding": floats(w.TurnEmbedding), "turn_weight": w.TurnWeight})
		}
		if len(done) == 0 && len(charged) == 0 {
			return nil, nil
		}
		_, err = db.txRun(ctx, tx, "graph_save", map[string]any{"save": map[string]any{"entities": entityRows(entities), "mentions": mentions,
			"facts": factRows(facts), "conflicts": conflictRows(conflicts), "episodes": done, "charged": charged}, "now": now})
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

func (db *DB) Requeue(ctx context.Context, id string, vis graph.Visible) (*graph.Episode, error) {
	records, err := db.run(ctx, neo4j.AccessModeWrite, "episode_requeue", visParams(vis, map[string]any{"uuid": id}))
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, errNotFound
	}
	e := episodeFromNode(records[0].Values[0].(neo4j.Node))
	if was := str(records[0].Values[1]); was != graph.StatusFailed {
		return nil, graph.Errorf(graph.ECONFLICT, "only a failed memory can be retried; this one is %s", was)
	}
	return e, nil
}

func (db *DB) QueueDepth(ctx context.Context, scope string) (map[string]int, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "queue_depth", map[string]any{"scope": scope})
	if err != nil {
		return nil, err
	}
	out := map[string]int{graph.StatusQueued: 0, graph.StatusProcessing: 0, graph.StatusFailed: 0}
	for _, r := range records {
		out[str(r.Values[0])] = int(num(r.Values[1]))
	}
	return out, nil
}

func (db *DB) Neighbourhoods(ctx context.Context, qs []graph.NeighbourhoodQuery, limit int) ([]graph.Neighbourhood, error) {
	return db.neighbourhoods(ctx, qs, limit, exactSearchMax)
}

// neighbourhoods reads the entities of a space of at most exactMax entities itself,
// and asks the fulltext index for a larger one (entity_neighbourhood).
func (db *DB) neighbourhoods(ctx context.Context, qs []graph.NeighbourhoodQuery, limit, exactMax int) ([]graph.Neighbourhood, error) {
	queries := make([]map[string]any, len(qs))
	for i, q := range qs {
		lower := make([]string, len(q.Names))
		lucene, words := []string{}, []string{}
		for j, n := range q.Names {
			lower[j] = strings.ToLower(strings.TrimSpace(n))
			if t := cypher.LuceneTerms(n); t != "" {
				lucene = append(lucene, "name:("+t+")") // names only; summaries would add noise
			}
			words = append(words, graph.Words(n)...)
		}
		queries[i] = map[string]any{"group_id": q.GroupID, "lower_names": lower, "terms": lucene,
			"words": distinct(words, 64), "mentioned": nullable(q.Mentioned)}
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, "entity_neighbourhood",
		map[string]any{"queries": queries, "limit": int64(limit), "exact_max": int64(exactMax)})
	if err != nil {
		return nil, err
	}
	out := make([]graph.Neighbourhood, len(qs))
	for _, r := range records {
		i := int(num(r.Values[0]))
		if i < 0 || i >= len(out) {
			continue
		}
		for _, n := range anyList(r.Values[1]) {
			out[i].Entities = append(out[i].Entities, entityFromNode(n.(neo4j.Node)))
		}
		for _, row := range anyList(r.Values[2]) {
			cols := anyList(row)
			f := factFromRel(cols[0].(neo4j.Relationship))
			f.SourceUUID, f.TargetUUID = str(cols[1]), str(cols[2])
			out[i].Facts = append(out[i].Facts, f)
		}
	}
	return out, nil
}
