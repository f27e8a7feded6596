package neo4jstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/cypher"
	"github.com/memgate/memgate/graph"
)

// Migrate applies every schema statement (each is idempotent), fills in or mends what older
// versions did not record or recorded wrong (the *_backfill queries), and records the schema
// version. A migration that requires a later Neo4j than the server's is skipped and its
// version recorded all the same (cypher.Migration). dimensions is the embedder's vector size; Migrate refuses to run
// when an existing vector index was built for another size, since mixing sizes would
// break every vector search, and rebuilds one built quantized or with other HNSW
// settings (see 003_vector). It rebuilds an episode_content fulltext index that is not
// eventually consistent, and then waits until it is online (001_graphiti).
func (db *DB) Migrate(ctx context.Context, dimensions int) error {
	migrations, err := cypher.Migrations()
	if err != nil {
		return err
	}
	server, err := db.ServerVersion(ctx)
	if err != nil {
		return err
	}
	existing, err := db.vectorIndexes(ctx)
	if err != nil {
		return err
	}
	for name, ix := range existing {
		if ix.dimensions != int64(dimensions) {
			return graph.Errorf(graph.EINVALID,
				"vector index %s was built for %d dimensions but embedder.dimensions is %d; "+
					"drop the index (DROP INDEX %s) and re-embed, or set embedder.dimensions to %d",
				name, ix.dimensions, dimensions, name, ix.dimensions)
		}
		if ix.quantized || ix.m != hnswM || ix.efConstruction != hnswEfConstruction {
			// Created by an earlier memgate: dropped here, 003_vector creates it again
			// as it is now, and Neo4j fills it from the stored vectors in the
			// background (search runs without vectors meanwhile). name is one of the
			// names schema_vector_dimensions reads, never input.
			db.log.WarnContext(ctx, "rebuilding a vector index built with other settings", "index", name,
				"quantized", ix.quantized, "hnsw_m", ix.m, "hnsw_ef_construction", ix.efConstruction)
			if _, err := neo4j.ExecuteQuery(ctx, db.driver, "DROP INDEX "+name+" IF EXISTS", nil,
				neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(db.database)); err != nil {
				return db.storeError("dropping vector index "+name, err)
			}
		}
	}
	rebuildEpisodes, err := db.episodeIndexBuiltOtherwise(ctx)
	if err != nil {
		return err
	}
	if rebuildEpisodes {
		// 001_graphiti creates it again, eventually consistent; the wait below keeps
		// this start from serving episode searches before it is online.
		db.log.WarnContext(ctx, "rebuilding the episode_content fulltext index as eventually consistent; start waits until it is online")
		if _, err := neo4j.ExecuteQuery(ctx, db.driver, "DROP INDEX episode_content IF EXISTS", nil,
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(db.database)); err != nil {
			return db.storeError("dropping fulltext index episode_content", err)
		}
	}
	for _, m := range migrations {
		if m.Neo4j != "" && !cypher.AtLeast(server, m.Neo4j) {
			db.log.InfoContext(ctx, "schema step skipped: it needs a later neo4j", "schema_step", fmt.Sprintf("%03d_%s", m.Version, m.Name),
				"requires", m.Neo4j, "neo4j_version", server)
			continue
		}
		for i, stmt := range m.Statements {
			// Schema commands run in auto-commit transactions; they cannot share a
			// transaction with data writes.
			_, err := neo4j.ExecuteQuery(ctx, db.driver, stmt, map[string]any{"dimensions": dimensions,
				"hnsw_m": hnswM, "hnsw_ef_construction": hnswEfConstruction},
				neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(db.database))
			var neoErr *neo4j.Neo4jError
			if errors.As(err, &neoErr) && neoErr.Code == "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists" {
				// Another memgate starting at the same time created the same index or
				// constraint between this statement's IF NOT EXISTS check and its own
				// creation: what the statement asks for exists.
				err = nil
			}
			if err != nil {
				return db.storeError(fmt.Sprintf("schema %03d_%s statement %d", m.Version, m.Name, i+1), err)
			}
		}
	}
	if rebuildEpisodes {
		if _, err := neo4j.ExecuteQuery(ctx, db.driver, "CALL db.awaitIndexes($seconds)", map[string]any{"seconds": int64(episodeIndexWait / time.Second)},
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(db.database)); err != nil {
			return db.storeError("waiting for fulltext index episode_content", err)
		}
	}
	for _, backfill := range []string{"authorship_backfill", "org_backfill", "webhook_backfill", "vector_backfill"} {
		if _, err := db.run(ctx, neo4j.AccessModeWrite, backfill, nil); err != nil {
			return err
		}
	}
	if err := db.rewriteTerms(ctx); err != nil {
		return err
	}
	version := migrations[len(migrations)-1].Version
	if _, err := db.run(ctx, neo4j.AccessModeWrite, "schema_version_set", map[string]any{"version": version}); err != nil {
		return err
	}
	db.log.InfoContext(ctx, "schema applied", "schema_version", version, "vector_dimensions", dimensions, "neo4j_version", server)
	return nil
}

// termsRule names the rule stored search terms are made by (terms.Of: Snowball
// English stems). A start that finds the database's terms recorded under another
// rule, or none, rewrites every item's terms before it serves; items an older memgate
// writes during a rolling upgrade keep that one's terms until they are written again.
const termsRule = "snowball-english"

// termsBatch is how many items a transaction of the rewrite writes.
const termsBatch = 2000

// rewriteTerms rewrites the stored search terms of every episode, entity and fact by
// termsRule, unless the database records that rule already.
func (db *DB) rewriteTerms(ctx context.Context) error {
	records, err := db.run(ctx, neo4j.AccessModeWrite, "schema_terms", nil)
	if err != nil {
		return err
	}
	if len(records) > 0 && records[0].Values[0] == termsRule {
		return nil
	}
	for _, kind := range []string{"episode", "entity", "fact"} {
		written := 0
		for after := ""; ; {
			batch, err := db.run(ctx, neo4j.AccessModeRead, "terms_backfill_read", map[string]any{"kind": kind, "after": after, "limit": int64(termsBatch)})
			if err != nil {
				return err
			}
			if len(batch) == 0 {
				break
			}
			rows := make([]map[string]any, len(batch))
			for i, r := range batch {
				after = str(r.Values[0])
				rows[i] = map[string]any{"uuid": after, "text": r.Values[1], "terms": searchTerms(str(r.Values[1]))}
			}
			if _, err := db.run(ctx, neo4j.AccessModeWrite, "terms_backfill_write", map[string]any{"kind": kind, "rows": rows}); err != nil {
				return err
			}
			written += len(rows)
		}
		db.log.InfoContext(ctx, "search terms rewritten", "kind", kind, "items", written, "terms", termsRule)
	}
	_, err = db.run(ctx, neo4j.AccessModeWrite, "schema_terms_set", map[string]any{"terms": termsRule})
	return err
}

// episodeIndexWait bounds how long a start waits for a rebuilt episode_content index
// to be filled from the stored episodes.
const episodeIndexWait = 30 * time.Minute

// episodeIndexBuiltOtherwise reports whether episode_content exists but is not
// eventually consistent (see 001_graphiti).
func (db *DB) episodeIndexBuiltOtherwise(ctx context.Context) (bool, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "schema_episode_index", nil)
	if err != nil || len(records) == 0 {
		return false, err
	}
	consistent, _ := records[0].Get("eventually_consistent")
	return consistent != true, nil
}

// The HNSW settings of the vector indexes; 003_vector says why.
const (
	hnswM              = 32
	hnswEfConstruction = 200
)

// vectorIndex is how an existing vector index was built.
type vectorIndex struct {
	dimensions, m, efConstruction int64
	quantized                     bool
	state                         string // ONLINE, POPULATING, FAILED
}

func (db *DB) vectorIndexes(ctx context.Context) (map[string]vectorIndex, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "schema_vector_dimensions", nil)
	if err != nil {
		return nil, err
	}
	out := map[string]vectorIndex{}
	for _, r := range records {
		name, _ := r.Get("name")
		dims, _ := r.Get("dimensions")
		quantized, _ := r.Get("quantized")
		m, _ := r.Get("m")
		ef, _ := r.Get("ef_construction")
		state, _ := r.Get("state")
		if n, ok := dims.(int64); ok {
			out[fmt.Sprint(name)] = vectorIndex{dimensions: n, quantized: quantized == true, m: num(m), efConstruction: num(ef),
				state: fmt.Sprint(state)}
		}
	}
	return out, nil
}

// Ready reports whether the database answers and carries this memgate's schema or a
// later one: migrations only add (indexes, constraints; a backfill runs at every
// start), so during a rolling upgrade the replicas still on the older binary stay
// ready once a newer one has migrated. The error is EUNAVAILABLE with a reason an
// operator can act on.
func (db *DB) Ready(ctx context.Context) error {
	if err := db.driver.VerifyConnectivity(ctx); err != nil {
		return graph.Wrap(graph.EUNAVAILABLE, err, "neo4j is not reachable")
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, "schema_version_get", nil)
	if err != nil {
		return graph.Wrap(graph.EUNAVAILABLE, err, "neo4j did not answer the schema check")
	}
	var have int64
	if len(records) > 0 {
		v, _ := records[0].Get("version")
		have, _ = v.(int64)
	}
	if want := int64(cypher.SchemaVersion()); have < want {
		return graph.Errorf(graph.EUNAVAILABLE, "schema version is %d, want %d: run memgate migrate", have, want)
	}
	return nil
}

// EmbeddedBy records name (the configured embedder: its model and prefixes) as the one
// whose vectors the database holds, unless one is recorded already, and returns the
// one recorded ("unrecorded" for vectors an earlier memgate stored without saying).
func (db *DB) EmbeddedBy(ctx context.Context, name string) (string, error) {
	records, err := db.run(ctx, neo4j.AccessModeWrite, "schema_embedder", map[string]any{"name": name})
	if err != nil || len(records) == 0 {
		return "", err
	}
	return str(records[0].Values[0]), nil
}
