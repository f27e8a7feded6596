// Package neo4jtest gives integration tests a real Neo4j: the one named by
// MG_TEST_NEO4J_URI (make test starts the local launcher and sets it), else a
// neo4j:5.26 container through testcontainers when Docker is available. Without
// either, tests fail with instructions; they never pass by skipping.
package neo4jtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
)

// Dimensions is the embedding size test databases are migrated with (the hashing
// embedder's default).
const Dimensions = 256

var (
	once   sync.Once
	uri    string
	uriErr string
)

// URI returns the Bolt URI of the test database, starting a container on first use
// when no URI is configured. With go test -short it skips the test: every integration
// test reaches the database through here.
func URI(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: go test -short runs the unit tests only")
	}
	once.Do(func() { uri, uriErr = resolve() })
	if uri == "" {
		tb.Fatal(uriErr)
	}
	return uri
}

func resolve() (string, string) {
	if u := os.Getenv("MG_TEST_NEO4J_URI"); u != "" {
		return u, ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	provider, err := testcontainers.NewDockerProvider()
	if err == nil {
		err = provider.Health(ctx)
		_ = provider.Close()
	}
	if err != nil {
		return "", "integration tests need a Neo4j 5.26 and none is configured: run `make test` " +
			"(it starts the local Neo4j), or `scripts/neo4j-local start` and set " +
			"MG_TEST_NEO4J_URI=bolt://127.0.0.1:7687, or make Docker available for testcontainers"
	}
	c, err := testcontainers.Run(ctx, "neo4j:5.26-community",
		testcontainers.WithEnv(map[string]string{"NEO4J_AUTH": "none"}),
		testcontainers.WithExposedPorts("7687/tcp"),
		testcontainers.WithWaitStrategy(wait.ForLog("Started.").WithStartupTimeout(2*time.Minute)))
	if err != nil {
		return "", "starting a Neo4j container failed: " + err.Error()
	}
	// The container lives as long as the test binary; testcontainers' reaper removes it.
	endpoint, err := c.PortEndpoint(ctx, "7687/tcp", "bolt")
	if err != nil {
		return "", "reading the Neo4j container's port failed: " + err.Error()
	}
	return endpoint, ""
}

var (
	migrateOnce       sync.Once
	migrateErr        error
	migrateDimensions int
)

// DB returns a store on the test database with the schema applied, closed when the
// test ends. Tests isolate themselves with fresh random ids, never by wiping data,
// and erase what they stored with Forget.
func DB(tb testing.TB) *neo4jstore.DB {
	tb.Helper()
	return DBWith(tb, Dimensions)
}

// DBWith is DB with vector indexes of the given size, for a benchmark embedding with
// another model; a test process migrates its database for one size only.
func DBWith(tb testing.TB, dimensions int) *neo4jstore.DB {
	tb.Helper()
	db, err := neo4jstore.Open(Options(tb), Logger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = db.Close(ctx)
	})
	migrateOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		migrateErr, migrateDimensions = db.Migrate(ctx, dimensions), dimensions
	})
	if migrateErr != nil {
		tb.Fatalf("migrating the test database: %v", migrateErr)
	}
	if dimensions != migrateDimensions {
		tb.Fatalf("the test database was migrated for %d dimensions, not %d", migrateDimensions, dimensions)
	}
	return db
}

// URI2026 returns the Bolt URI of a second test database, a Neo4j 2026.01 or later
// (MG_TEST_NEO4J_2026_URI), for the tests of what only such a server does (filtering
// inside a vector index). Without it they skip: make test runs against Neo4j 5.26
// only. One starts with NEO4J_LOCAL_VERSION=2026.01.4 scripts/neo4j-local start (on
// another port and data folder; it fetches Neo4j 2026.01 and a Java 25).
func URI2026(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: go test -short runs the unit tests only")
	}
	u := os.Getenv("MG_TEST_NEO4J_2026_URI")
	if u == "" {
		tb.Skip("needs a Neo4j 2026.01 or later: set MG_TEST_NEO4J_2026_URI (see neo4jtest.URI2026)")
	}
	return u
}

// DBAt is DB on the database at uri (URI2026's), migrated for Dimensions by this call.
func DBAt(tb testing.TB, uri string) *neo4jstore.DB {
	tb.Helper()
	db, err := neo4jstore.Open(neo4jstore.Options{URI: uri, User: "neo4j", Database: "neo4j", MaxPoolSize: 20,
		ConnectTimeout: 5 * time.Second}, Logger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = db.Close(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := db.Migrate(ctx, Dimensions); err != nil {
		tb.Fatalf("migrating the database at %s: %v", uri, err)
	}
	return db
}

// Options returns connection options for the test database.
func Options(tb testing.TB) neo4jstore.Options {
	tb.Helper()
	return neo4jstore.Options{URI: URI(tb), User: "neo4j", Database: "neo4j", MaxPoolSize: 20, ConnectTimeout: 5 * time.Second}
}

// Logger returns a slog logger writing to the test's log.
func Logger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Helper()
	w.tb.Log(string(p[:len(p)-1]))
	return len(p), nil
}

var _ io.Writer = testWriter{}

// AuditEvent returns a maker of distinct audit events for changes tests make directly
// through the store.
func AuditEvent(run string) func() *graph.AuditEvent {
	n := 0
	return func() *graph.AuditEvent {
		n++
		return &graph.AuditEvent{ID: fmt.Sprintf("test-%s-%d", run, n), Kind: graph.AuditMembershipChanged,
			At: time.Now().UTC(), Actor: "test", Subject: run, HostKey: "test"}
	}
}

// forget erases what one test stored: every node of a space, agent, team, principal or
// webhook whose id contains the test's mark (with the webhook's deliveries, those about
// the shared global and system spaces included), the episodes of such agents (promoted copies
// included), and the audit events about them; then the entities of the global spaces
// (every organization's) that no episode mentions any more.
const forget = `
MATCH (n)
WHERE n.group_id CONTAINS $mark
   OR (n:Agent AND n.id CONTAINS $mark) OR (n:Team AND n.name CONTAINS $mark)
   OR (n:Principal AND n.id CONTAINS $mark) OR ((n:Episodic OR n:MemoryVersion) AND n.agent_id CONTAINS $mark)
   OR (n:AuditEvent AND (n.subject CONTAINS $mark OR n.actor CONTAINS $mark OR n.space CONTAINS $mark))
   OR (n:Webhook AND (n.org CONTAINS $mark OR n.requester CONTAINS $mark OR n.agent CONTAINS $mark OR n.team CONTAINS $mark))
   OR (n:WebhookDelivery AND EXISTS { MATCH (w:Webhook {id: n.webhook_id})
         WHERE w.org CONTAINS $mark OR w.requester CONTAINS $mark OR w.agent CONTAINS $mark OR w.team CONTAINS $mark })
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 1000 ROWS`

const memoryIDs = `
MATCH (e:Episodic) WHERE e.group_id CONTAINS $mark OR e.agent_id CONTAINS $mark
RETURN e.uuid`

const forgetEvents = `
MATCH (a:AuditEvent) WHERE a.subject IN $ids
CALL (a) { DETACH DELETE a } IN TRANSACTIONS OF 1000 ROWS`

// A seeded conflict's entities mention no episode either; the test that seeded them
// erases them when it ends (SeedConflict), not another test before that.
const forgetOrphans = `
MATCH (n:Entity) WHERE (n.group_id = 'global' OR n.group_id ENDS WITH '_global') AND NOT (n)<-[:MENTIONS]-() AND n.seeded IS NULL
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 1000 ROWS`

// forgetOrphanDeliveries erases the deliveries whose webhook is gone: another test's
// refusal, audited while a test's audit webhook was being forgotten, can leave one
// (webhook_prune erases them in a deployment).
const forgetOrphanDeliveries = `
MATCH (d:WebhookDelivery) WHERE NOT EXISTS { MATCH (w:Webhook {id: d.webhook_id}) }
DETACH DELETE d`

// ForgetEventsAbout erases, when the test ends, the audit events naming ids. Forget
// finds the events about a test's memories through the memories; a memory of the
// shared global space that another test's sweeper erased before the test ended is
// not there to find, and its `expired` event names nothing else of the test.
func ForgetEventsAbout(tb testing.TB, ids []string) {
	tb.Helper()
	target := URI(tb)
	tb.Cleanup(func() {
		if err := Run(target, forgetEvents, map[string]any{"ids": ids}); err != nil {
			tb.Errorf("erasing the audit events about %v: %v", ids, err)
		}
	})
}

// Forget erases, when the test ends, everything it stored under ids that contain
// mark (a random suffix of the test's own), so the shared test database holds no test
// data after a run; first it checks the graph invariants over it, failing the test
// that broke one. A mark shorter than 6 characters is refused: it would match other
// tests' data.
func Forget(tb testing.TB, mark string) {
	tb.Helper()
	ForgetAt(tb, URI(tb), mark)
}

// ForgetAt is Forget on the database at target (a second Neo4j, URI2026's).
func ForgetAt(tb testing.TB, target, mark string) {
	tb.Helper()
	if len(mark) < 6 {
		tb.Fatalf("neo4jtest.Forget(%q): a mark must be at least 6 characters", mark)
	}
	tb.Cleanup(func() {
		// The audit events about the test's memories name them only by id (the expiry
		// sweeper's, for a memory of the global space): their ids are read first, and
		// the events erased once the memories are, so a sweeper erasing one meanwhile
		// leaves nothing behind either.
		checkInvariants(tb, target, mark)
		ids, err := column(target, memoryIDs, map[string]any{"mark": mark})
		if err != nil {
			tb.Errorf("reading the test's memory ids (mark %s): %v", mark, err)
		}
		if err := Run(target, forget, map[string]any{"mark": mark}); err != nil {
			tb.Errorf("erasing the test's data (mark %s): %v", mark, err)
		}
		if err := Run(target, forgetEvents, map[string]any{"ids": ids}); err != nil {
			tb.Errorf("erasing the audit events of the test's memories: %v", err)
		}
		if err := Run(target, forgetOrphans, nil); err != nil {
			tb.Errorf("erasing orphaned global entities: %v", err)
		}
		if err := Run(target, forgetOrphanDeliveries, nil); err != nil {
			tb.Errorf("erasing deliveries whose webhook is gone: %v", err)
		}
	})
}

// invariants are what every graph memgate writes must satisfy, each a query over the
// spaces whose group_id contains $mark that returns the ids breaking it.
var invariants = []struct{ name, query string }{
	{"no fact ends before it begins", `MATCH ()-[r:RELATES_TO]->() WHERE r.group_id CONTAINS $mark AND r.invalid_at < r.valid_at
		RETURN r.uuid LIMIT 20`},
	{"a fact and its two entities are in one space", `MATCH (s)-[r:RELATES_TO]->(t) WHERE r.group_id CONTAINS $mark
		AND (s.group_id <> r.group_id OR t.group_id <> r.group_id) RETURN r.uuid LIMIT 20`},
	{"a mention stays within its space", `MATCH (e:Episodic)-[m:MENTIONS]->(n:Entity) WHERE e.group_id CONTAINS $mark
		AND (n.group_id <> e.group_id OR m.group_id <> e.group_id) RETURN e.uuid + ' -> ' + n.uuid LIMIT 20`},
	{"every fact has a supporting episode", `MATCH (s)-[r:RELATES_TO]->() WHERE r.group_id CONTAINS $mark AND s.seeded IS NULL
		AND size(coalesce(r.episodes, [])) = 0 RETURN r.uuid LIMIT 20`},
	{"every timestamp is a native DateTime", `MATCH ()-[r:RELATES_TO]->() WHERE r.group_id CONTAINS $mark
		AND any(v IN [r.created_at, r.valid_at, r.invalid_at, r.expired_at] WHERE v IS NOT NULL AND NOT valueType(v) STARTS WITH 'ZONED DATETIME')
		RETURN r.uuid LIMIT 20`},
	{"a delegation is a writer's, never its agent's owner's", `MATCH (a:Agent)-[d:DELEGATED_TO]->(p:Principal) WHERE a.id CONTAINS $mark
		AND (p.id = a.owner_id OR d.role IS NULL OR d.role <> 'writer') RETURN a.id + ' -> ' + p.id LIMIT 20`},
}

// checkInvariants fails tb, naming the invariant and the ids, for each invariant the
// graph the test stored under mark breaks.
func checkInvariants(tb testing.TB, uri, mark string) {
	tb.Helper()
	for _, inv := range invariants {
		ids, err := column(uri, inv.query, map[string]any{"mark": mark})
		if err != nil {
			tb.Errorf("checking %q (mark %s): %v", inv.name, mark, err)
			continue
		}
		if len(ids) > 0 {
			tb.Errorf("graph invariant broken, %s: %v", inv.name, ids)
		}
	}
}

// Run executes one auto-commit statement (as CALL ... IN TRANSACTIONS needs) on the
// database at uri and consumes its result.
func Run(uri, statement string, params map[string]any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	driver, err := neo4j.NewDriverWithContext(uri, neo4j.NoAuth())
	if err != nil {
		return err
	}
	defer driver.Close(ctx)
	session := driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: "neo4j"})
	defer session.Close(ctx)
	res, err := session.Run(ctx, statement, params)
	if err != nil {
		return err
	}
	_, err = res.Consume(ctx)
	return err
}

// read runs a read statement on the database at uri and returns its rows.
func read(uri, statement string, params map[string]any) ([]*neo4j.Record, error) {
	return query(uri, statement, params, neo4j.ExecuteQueryWithReadersRouting())
}

// query runs a statement on the database at uri and returns its rows.
func query(uri, statement string, params map[string]any, opts ...neo4j.ExecuteQueryConfigurationOption) ([]*neo4j.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	driver, err := neo4j.NewDriverWithContext(uri, neo4j.NoAuth())
	if err != nil {
		return nil, err
	}
	defer driver.Close(ctx)
	res, err := neo4j.ExecuteQuery(ctx, driver, statement, params, neo4j.EagerResultTransformer,
		append([]neo4j.ExecuteQueryConfigurationOption{neo4j.ExecuteQueryWithDatabase("neo4j")}, opts...)...)
	if err != nil {
		return nil, err
	}
	return res.Records, nil
}

// column runs a read statement and returns its first column, as strings.
func column(uri, statement string, params map[string]any) ([]string, error) {
	records, err := read(uri, statement, params)
	out := make([]string, 0, len(records))
	for _, r := range records {
		if s, ok := r.Values[0].(string); ok {
			out = append(out, s)
		}
	}
	return out, err
}

// Count runs a read statement that returns one number (as its first column) and
// returns it, for a test that checks what is in Neo4j rather than what memgate says.
func Count(tb testing.TB, statement string, params map[string]any) int64 {
	tb.Helper()
	return CountAt(tb, URI(tb), statement, params)
}

// CountAt is Count on the Neo4j at uri (a test's private one).
func CountAt(tb testing.TB, uri, statement string, params map[string]any) int64 {
	tb.Helper()
	records, err := read(uri, statement, params)
	if err != nil {
		tb.Fatal(err)
	}
	if len(records) != 1 {
		tb.Fatalf("%s: %d rows, want one", statement, len(records))
	}
	n, ok := records[0].Values[0].(int64)
	if !ok {
		tb.Fatalf("%s: %v is not a number", statement, records[0].Values[0])
	}
	return n
}

// Rows runs a read statement and returns its rows as maps, for what a test shows when
// it fails.
func Rows(tb testing.TB, statement string, params map[string]any) []map[string]any {
	tb.Helper()
	records, err := read(URI(tb), statement, params)
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]map[string]any, len(records))
	for i, r := range records {
		out[i] = r.AsMap()
	}
	return out
}

// Stored counts the memories and versions in group and, when text is given, those
// anywhere in the store whose content holds it: what a test checks is stored nowhere
// after a move, a dissolution or an erasure. The space is an index seek; the text is
// a scan of every memory and version.
func Stored(tb testing.TB, text, group string) int64 {
	tb.Helper()
	params := map[string]any{"text": text, "group": group}
	n := Count(tb, `CALL () { MATCH (n:Episodic {group_id: $group}) RETURN n
  UNION MATCH (n:MemoryVersion {group_id: $group}) RETURN n } RETURN count(n)`, params)
	if text != "" {
		n += Count(tb, `MATCH (n) WHERE (n:Episodic OR n:MemoryVersion)
  AND n.content CONTAINS $text AND n.group_id <> $group RETURN count(n)`, params)
	}
	return n
}

// Census counts the nodes and the relationships whose group_id starts with prefix:
// the size of a set of spaces, for tests that check a request changed nothing.
func Census(tb testing.TB, prefix string) (nodes, relationships int64) {
	tb.Helper()
	p := map[string]any{"prefix": prefix}
	return Count(tb, "MATCH (n) WHERE n.group_id STARTS WITH $prefix RETURN count(n)", p),
		Count(tb, "MATCH ()-[r]->() WHERE r.group_id STARTS WITH $prefix RETURN count(r)", p)
}

const seedConflict = `
WITH randomUUID() AS id
CREATE (a:Entity {uuid: randomUUID(), name: 'Seeded ' + $word, group_id: $g, created_at: datetime(), seeded: true}),
       (b:Entity {uuid: randomUUID(), name: 'Seeded Old Town', group_id: $g, created_at: datetime(), seeded: true}),
       (c:Entity {uuid: randomUUID(), name: 'Seeded New Town', group_id: $g, created_at: datetime(), seeded: true})
CREATE (a)-[o:RELATES_TO {uuid: randomUUID(), name: 'LIVES_IN', fact: $word + ' lives in the old town.',
        group_id: $g, created_at: datetime(), valid_at: datetime('2024-01-01T00:00:00Z'), episodes: [], conflicts: [id]}]->(b)
CREATE (a)-[n:RELATES_TO {uuid: randomUUID(), name: 'LIVES_IN', fact: $word + ' lives in the new town.',
        group_id: $g, created_at: datetime(), valid_at: datetime('2025-01-01T00:00:00Z'), episodes: [], conflicts: [id]}]->(c)
CREATE (:Conflict {uuid: id, group_id: $g, old_fact: o.uuid, new_fact: n.uuid, episode: '', created_at: datetime()})
RETURN [a.uuid, b.uuid, c.uuid] AS entities, id`

const forgetConflict = `
MATCH (n) WHERE (n:Entity AND n.uuid IN $entities) OR (n:Conflict AND n.uuid = $id)
DETACH DELETE n`

// SeedConflict stores an open conflict (memory.conflicts: review) in the space
// groupID, two LIVES_IN facts of one person named by word that name it, as ingestion
// would, and returns its id; what it stored is erased when the test ends, in any space.
func SeedConflict(tb testing.TB, groupID, word string) string {
	tb.Helper()
	target := URI(tb)
	records, err := query(target, seedConflict, map[string]any{"g": groupID, "word": word})
	if err != nil || len(records) != 1 {
		tb.Fatalf("seeding a conflict in %s: %v", groupID, err)
	}
	entities, id := records[0].Values[0], records[0].Values[1].(string)
	tb.Cleanup(func() {
		if err := Run(target, forgetConflict, map[string]any{"entities": entities, "id": id}); err != nil {
			tb.Errorf("erasing the seeded conflict %s: %v", id, err)
		}
	})
	return id
}

// SpaceTypes reads the entity and edge types an agent (label Agent, by id) or a team
// (label Team, by name) of the implicit organization stores (PUT .../types), nil
// lists where none; found is false when there is no such agent or team.
func SpaceTypes(tb testing.TB, label, name string) (t graph.SpaceTypes, found bool) {
	tb.Helper()
	key := map[string]string{"Agent": "id", "Team": "name"}[label]
	if key == "" {
		tb.Fatalf("SpaceTypes: %q is neither Agent nor Team", label)
	}
	records, err := read(URI(tb), "MATCH (n:"+label+" {org: '', "+key+": $name}) RETURN n.entity_types, n.edge_types",
		map[string]any{"name": name})
	if err != nil {
		tb.Fatal(err)
	}
	if len(records) == 0 {
		return t, false
	}
	list := func(v any) []string {
		items, ok := v.([]any)
		if !ok {
			return nil
		}
		out := []string{}
		for _, item := range items {
			s, _ := item.(string)
			out = append(out, s)
		}
		return out
	}
	return graph.SpaceTypes{EntityTypes: list(records[0].Values[0]), EdgeTypes: list(records[0].Values[1])}, true
}

// RunnerPoll is how often a test's ingestion runner looks for work nothing woke it
// for. A runner is woken by what its own process queues (graph.Queue.Queued) and by
// its retries coming due, so a test's runners, all in its process, find their work
// without polling; each look is a claim, one of the heaviest reads, on the Neo4j every
// package's tests share. A test of what only a poll finds (a lease that expired,
// another process's write) sets its own.
const RunnerPoll = 2 * time.Second

// FirstPoll is a poll's first pause; Poll the next ones.
const FirstPoll = 20 * time.Millisecond

// Poll pauses a test polling for a state for wait, and returns the next pause: twice
// as long, up to 200 ms. A state reached at once is seen at once, and one that takes
// seconds on a busy machine costs a request every 200 ms, not every 20 ms: each look
// is a request, and the suite's Neo4j is its bottleneck.
func Poll(wait time.Duration) time.Duration {
	time.Sleep(wait)
	return min(2*wait, 200*time.Millisecond)
}
