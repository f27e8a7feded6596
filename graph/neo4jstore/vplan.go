package neo4jstore

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/cypher"
	"github.com/memgate/memgate/graph"
)

// Which fact vector query the store runs depends on the server. Neo4j 2026.01 and
// later can filter inside a vector index (SEARCH ... WHERE r.group_id = g over an index
// created WITH [r.group_id]); schema 013_fact_group_vector creates such an index,
// fact_group_embedding, on those servers only. There, once that index is online, fact
// vector search runs fact_search_vector_filtered: the same exact plan up to
// exactVectorMax visible facts, and above it one in-index search per visible space
// instead of the whole-graph index widened through other spaces' facts. On Neo4j 5.26
// (the default and the one make test runs against) nothing changes:
// fact_search_vector.
//
// Measured on Neo4j 2026.01.4 with BenchmarkVectorPlans (BENCHMARKS.md, "In-index
// filtering on Neo4j 2026.01"): 50,000 facts, p50 / p99 ms and recall@10 against exact
// cosine, the in-index plan (100 candidates a space) against the whole-graph index
// widened as on 5.26: 1,000 visible facts 5.7 / 16.0 (1.000) against 13.9 / 123.6
// (1.000), exact cosine 17.6 / 56.5; 2,500: 7.8 / 33.7 (1.000) against 13.8 / 22.7
// (0.995); 5,000: 10.7 / 61.8 (1.000) against 14.9 / 105.4 (0.9975); 10,000: 8.7 / 24.5
// (0.9975) against 16.0 / 45.8 (0.9975); 25,000, half the graph: 19.4 / 333.4 (0.995)
// against 21.0 / 114.7 (0.9975), level at p50 with a worse p99 on a loaded machine.
// With 10 candidates a space it was faster still and missed more (0.9525 at 10,000).
//
// The store reads the server's version once, when Migrate runs at start or else at
// the first fact vector search, and the index's state with it. While the server could
// filter but the index is missing or still being filled (after an upgrade to 2026.01,
// Neo4j fills it from the stored vectors in the background), it looks again at most
// every serverRecheck. A server older than filteredSince is never asked again: a
// process that moves to another Neo4j restarts.
const (
	filteredSince      = "2026.01" // 013_fact_group_vector's "requires: Neo4j" (TestFilteredSince)
	filteredIndex      = "fact_group_embedding"
	factFilteredQuery  = "fact_search_vector_filtered"
	factVectorQuery    = "fact_search_vector"
	serverRecheck      = time.Minute
	serverVersionQuery = "server_version"
)

// exactFilteredMax is the exact plan's limit in fact_search_vector_filtered: exact
// cosine over at most that many visible facts, the in-index plan above, which was 3
// times cheaper at 1,000 facts (above). 300 is search_small's limit too: above it,
// fact vector search runs alone, in-index.
const exactFilteredMax = 300

// filteredCandidates is how many candidates the in-index plan asks of each visible
// space first (widened ×8, up to maxCandidates, as the whole-graph index is, while the
// other filters leave fewer than limit): 10 per hit wanted, at least 100, whose
// recall@10 was 0.995 to 1.000 above, where 10 a space fell to 0.9525.
func filteredCandidates(limit int) int { return max(10*limit, 100) }

// server is what the store knows of the Neo4j it talks to.
type server struct {
	mu       sync.Mutex // held by the one search that looks, others go on with what is known
	version  atomic.Value
	filtered atomic.Bool  // fact_group_embedding is online: factFilteredQuery
	next     atomic.Int64 // unix nanoseconds from which to look again; math.MaxInt64: never
}

// ServerVersion is the version of the Neo4j the store talks to, e.g. 5.26.30, read
// once.
func (db *DB) ServerVersion(ctx context.Context) (string, error) {
	if v, _ := db.server.version.Load().(string); v != "" {
		return v, nil
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, serverVersionQuery, nil)
	if err != nil {
		return "", err
	}
	if len(records) == 0 {
		return "", graph.Errorf(graph.EINTERNAL, "neo4j did not name its version")
	}
	v, _ := records[0].Values[0].(string)
	if _, ok := cypher.ParseVersion(v); !ok {
		return "", graph.Errorf(graph.EINTERNAL, "neo4j names its version %q", v)
	}
	db.server.version.Store(v)
	return v, nil
}

// FiltersInIndex reports whether fact vector search filters inside the vector index
// (fact_search_vector_filtered), looking at the server first when it is time to.
func (db *DB) FiltersInIndex(ctx context.Context) bool {
	s := &db.server
	if !s.filtered.Load() && time.Now().UnixNano() >= s.next.Load() && s.mu.TryLock() {
		if time.Now().UnixNano() >= s.next.Load() {
			db.lookAtServer(ctx)
		}
		s.mu.Unlock()
	}
	return s.filtered.Load()
}

// lookAtServer reads the server's version and, on one that can filter inside an
// index, whether fact_group_embedding is online; called with server.mu held.
func (db *DB) lookAtServer(ctx context.Context) {
	s := &db.server
	later := func() { s.next.Store(time.Now().Add(serverRecheck).UnixNano()) }
	version, err := db.ServerVersion(ctx)
	if err != nil {
		db.log.WarnContext(ctx, "reading the neo4j version", "error", err.Error())
		later()
		return
	}
	if !cypher.AtLeast(version, filteredSince) {
		s.next.Store(math.MaxInt64)
		return
	}
	indexes, err := db.vectorIndexes(ctx)
	if err != nil {
		db.log.WarnContext(ctx, "reading the vector indexes", "error", err.Error())
		later()
		return
	}
	if ix, ok := indexes[filteredIndex]; ok && ix.state == "ONLINE" {
		s.filtered.Store(true)
		db.log.InfoContext(ctx, "fact vector search filters inside the index", "index", filteredIndex, "neo4j_version", version)
		return
	}
	s.filtered.Store(false)
	db.log.InfoContext(ctx, "fact vector search waits for its filtered index", "index", filteredIndex,
		"neo4j_version", version, "state", indexes[filteredIndex].state)
	later()
}

// unfiltered goes back to fact_search_vector after the filtered query failed (the
// index dropped, say), and looks at the server again after serverRecheck.
func (db *DB) unfiltered(ctx context.Context, err error) {
	if db.server.filtered.CompareAndSwap(true, false) {
		db.server.next.Store(time.Now().Add(serverRecheck).UnixNano())
		db.log.WarnContext(ctx, "fact vector search stops filtering inside the index", "index", filteredIndex, "error", err.Error())
	}
}
