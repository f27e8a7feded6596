package neo4jstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

// Test-only access to the database, for asserting what the schema enforces.

func (db *DB) IndexNames(ctx context.Context) (map[string]bool, error) {
	res, err := neo4j.ExecuteQuery(ctx, db.driver, "SHOW INDEXES YIELD name RETURN name", nil,
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(db.database))
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, r := range res.Records {
		name, _ := r.Get("name")
		names[name.(string)] = true
	}
	return names, nil
}

// KeptPlans plans afresh (replan=force) and profiles every loaded query that keeps
// its plan (CYPHER replan=skip), and answers each one's steps: operator and details.
// It profiles rather than explains: the driver's Plan.Children answers the last child
// for every child (v5.28), its ProfiledPlan.Children each one.
func (db *DB) KeptPlans(ctx context.Context) (map[string][]string, error) {
	params := map[string]map[string]any{
		"search_small": searchParams(graph.Visible{GroupIDs: []string{"plans-test"}}, graph.SearchFilter{}, 10,
			map[string]any{"words": textParam([]string{"plans"}), "embedding": nil, "exact_max": int64(exactSearchMax),
				"facts": true, "entities": true, "episodes": true}),
		"principal_resolve": {"requests": []any{map[string]any{"i": 0, "org": "", "id": "plans-test", "asserted": []string{"t"}}}},
		"agent_get":         {"org": "", "id": "plans-test"},
	}
	plans := map[string][]string{}
	for name, text := range db.queries {
		rest, kept := strings.CutPrefix(text, replanSkip)
		if !kept {
			continue
		}
		if params[name] == nil {
			return nil, fmt.Errorf("%s keeps its plan: KeptPlans needs parameters to profile it with", name)
		}
		res, err := neo4j.ExecuteQuery(ctx, db.driver, "CYPHER replan=force PROFILE "+rest, params[name],
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(db.database))
		if err != nil {
			return nil, db.storeError(name, err)
		}
		var walk func(p neo4j.ProfiledPlan)
		walk = func(p neo4j.ProfiledPlan) {
			plans[name] = append(plans[name], fmt.Sprintf("%s %v", p.Operator(), p.Arguments()["Details"]))
			for _, c := range p.Children() {
				walk(c)
			}
		}
		walk(res.Summary.Profile())
	}
	return plans, nil
}

func (db *DB) CreateTwoEntitiesWithOneUUID(ctx context.Context) error {
	id := uuid.NewString()
	_, err := neo4j.ExecuteQuery(ctx, db.driver,
		"CREATE (:Entity {uuid: $uuid, group_id: 'test-unique'}) CREATE (:Entity {uuid: $uuid, group_id: 'test-unique'})",
		map[string]any{"uuid": id}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(db.database))
	if err != nil {
		return db.storeError("test_unique", err)
	}
	return nil
}

// SearchEpisodesUnfiltered is the fulltext search without any group restriction: the
// reference the benchmark compares the filtered search with. It exists only in tests.
func (db *DB) SearchEpisodesUnfiltered(ctx context.Context, query string, limit int) (int, error) {
	res, err := neo4j.ExecuteQuery(ctx, db.driver,
		"CALL db.index.fulltext.queryNodes('episode_content', $query) YIELD node AS e, score "+
			"RETURN e, score LIMIT $limit",
		map[string]any{"query": query, "limit": int64(limit)}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(db.database), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return 0, err
	}
	return len(res.Records), nil
}

// Ping runs the cheapest query there is: the floor of one Bolt round trip.
func (db *DB) Ping(ctx context.Context) error {
	_, err := neo4j.ExecuteQuery(ctx, db.driver, "RETURN 1", nil, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(db.database), neo4j.ExecuteQueryWithReadersRouting())
	return err
}

// SearchEpisodesPlan is SearchEpisodes with the size limit of the exact plan given, so
// the benchmark can run each plan on the same visible set: 0 always asks the fulltext
// index, a number above the visible set always scores the visible episodes.
func (db *DB) SearchEpisodesPlan(ctx context.Context, query string, vis graph.Visible, limit, exactMax int) ([]graph.ScoredEpisode, error) {
	return db.searchEpisodes(ctx, query, vis, graph.SearchFilter{}, limit, exactMax)
}

// NeighbourhoodsPlan is Neighbourhoods with the size limit of the exact plan given: 0
// always asks the fulltext index, a number above the space's size reads the space.
func (db *DB) NeighbourhoodsPlan(ctx context.Context, qs []graph.NeighbourhoodQuery, limit, exactMax int) ([]graph.Neighbourhood, error) {
	return db.neighbourhoods(ctx, qs, limit, exactMax)
}

// EntitiesByTextPlan is EntitiesByText with the size limit of the exact plan given: 0
// always asks the fulltext index (node_name_and_summary), a number above the visible
// set always scores its entities' name_terms.
func (db *DB) EntitiesByTextPlan(ctx context.Context, text string, vis graph.Visible, limit, exactMax int) ([]graph.EntityHit, error) {
	records, err := db.textSearch(ctx, "entity_search_text", text, vis, graph.SearchFilter{}, limit, exactMax)
	return entityHits(records), err
}

// FactsByTextPlan is FactsByText with the size limit of the exact plan given: 0 always
// asks the fulltext index (edge_name_and_fact).
func (db *DB) FactsByTextPlan(ctx context.Context, text string, vis graph.Visible, limit, exactMax int) ([]graph.FactHit, error) {
	records, err := db.textSearch(ctx, "fact_search_text", text, vis, graph.SearchFilter{}, limit, exactMax)
	return factHits(records), err
}

// ExactSearchMax is the size limit of the exact search plan memgate uses.
const ExactSearchMax = exactSearchMax

// SaveGraph writes entities and facts as ingestion does (graph_save), without
// episodes or leases: the search benchmark's generator.
func (db *DB) SaveGraph(ctx context.Context, entities []*graph.EntityNode, facts []*graph.Fact) error {
	_, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		return db.txRun(ctx, tx, "graph_save", map[string]any{"save": map[string]any{"entities": entityRows(entities),
			"mentions": []any{}, "facts": factRows(facts), "conflicts": []any{}, "episodes": []any{}, "charged": []any{}},
			"now": time.Now().UTC()})
	})
	return err
}

// ByIdempotencyKey is the look-up a write with an Idempotency-Key makes (inside its
// write transaction), in a read transaction of its own.
func (db *DB) ByIdempotencyKey(ctx context.Context, e *graph.Episode) (*graph.Episode, bool, error) {
	type found struct {
		e    *graph.Episode
		used bool
	}
	out, err := db.inTx(ctx, neo4j.AccessModeRead, func(tx neo4j.ManagedTransaction) (any, error) {
		e, used, err := db.txByIdempotencyKey(ctx, tx, e)
		return found{e, used}, err
	})
	if err != nil {
		return nil, false, err
	}
	return out.(found).e, out.(found).used, nil
}

// SealToken makes a consistency token of marks for scope with the deployment's key,
// as Token does, for a test to name bookmarks Token would not.
func (db *DB) SealToken(ctx context.Context, marks []string, scope string) (string, error) {
	aead, err := db.tokenSeal(ctx)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(marks)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, payload, []byte(scope))), nil
}

// TokenBookmarks opens a token made for scope and reads the bookmarks it names.
func (db *DB) TokenBookmarks(ctx context.Context, token, scope string) ([]string, error) {
	aead, err := db.tokenSeal(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, errToken
	}
	payload, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(scope))
	if err != nil {
		return nil, errToken
	}
	var marks []string
	return marks, json.Unmarshal(payload, &marks)
}

// StoreError is storeError, for the classification test.
func StoreError(err error) error { return (&DB{}).storeError("q", err) }
