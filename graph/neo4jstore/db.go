// Package neo4jstore implements graph's store interfaces on Neo4j. It is the only
// package that imports the Neo4j driver; query text comes from package cypher.
package neo4jstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	neo4jconfig "github.com/neo4j/neo4j-go-driver/v5/neo4j/config"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/memgate/memgate/cypher"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/batch"
)

// Options says how to reach Neo4j.
type Options struct {
	URI            string
	User           string
	Password       string // empty: no authentication (the local launcher runs without)
	Database       string
	MaxPoolSize    int
	ConnectTimeout time.Duration
	MaxRetryTime   time.Duration // how long a failed transaction is retried; 0: the driver's 30 s
	// Tracer makes a span of every named query run within a trace (trace.go); nil:
	// tracing is off.
	Tracer trace.TracerProvider
}

// DB is a handle on one Neo4j database: the driver, the loaded queries and a logger.
// It is safe for concurrent use.
type DB struct {
	driver   neo4j.DriverWithContext
	database string
	queries  cypher.Queries
	log      *slog.Logger
	stats    sync.Map // query name -> *QueryStat
	commits  *batch.Batcher[*graph.Episode, graph.CreateResult]
	// principals: the principal reads of requests arriving together, in one query.
	principals *batch.Batcher[principalAsk, graph.PrincipalFacts]
	// bookmarks: every transaction of the process starts after those before it and
	// leaves its own here, which consistency tokens name (consistency.go).
	bookmarks neo4j.BookmarkManager
	keyMu     sync.Mutex
	key       []byte // the deployment's consistency key, once read

	tracer    trace.Tracer
	spanAttrs []attribute.KeyValue
	finishes  *batch.Batcher[finish, bool] // webhook attempts recorded together
	server    server                       // the Neo4j's version (server.go)
	firsts    firstRuns                    // the first run of a query that plans slowly goes alone (plans.go)
}

// QueryStat is how often a named query ran and how long it took in all, for metrics.
type QueryStat struct {
	Count atomic.Int64
	Nanos atomic.Int64
}

// QueryStats calls fn for every query that ran.
func (db *DB) QueryStats(fn func(name string, s *QueryStat)) {
	db.stats.Range(func(k, v any) bool {
		fn(k.(string), v.(*QueryStat))
		return true
	})
}

func (db *DB) observe(name string, start time.Time) {
	v, _ := db.stats.LoadOrStore(name, &QueryStat{})
	s := v.(*QueryStat)
	s.Count.Add(1)
	s.Nanos.Add(int64(time.Since(start)))
}

// queryNames lists every query file this package runs; Open fails when one is missing.
var queryNames = []string{
	"schema_version_get", "schema_version_set", "schema_embedder", "schema_terms", "schema_terms_set", "terms_backfill_read", "terms_backfill_write", "schema_vector_dimensions", "schema_episode_index", "server_version",
	"episode_create", "episode_by_idempotency_key", "episode_get", "episode_list", "episode_search", "episode_search_vector", "episode_neighbours", "episode_expire_derived",
	"episode_delete", "episode_expired", "episode_expire_lock",
	"episode_unlink", "episode_lock", "episode_update", "episode_versions", "episode_support", "episode_move_hold", "authorship_backfill",
	"audit_create", "audit_list",
	"principal_resolve", "principal_set_promoter", "consistency_key", "consistency_latest",
	"org_backfill", "webhook_backfill", "vector_backfill", "org_move_check", "org_move_nodes", "org_move_edges",
	"agent_create", "agent_get", "agent_list", "agent_set_owner", "agent_erase_lock", "agent_delete", "agent_share", "agent_unshare", "agent_public_write",
	"agent_delegate", "agent_undelegate",
	"share_lapsed", "share_lapse", "share_use_audit",
	"team_create", "team_get", "team_list", "team_member_set", "team_member_remove", "team_memories", "team_lock", "team_dissolve",
	"space_types_get", "space_types_set",
	"episode_claim", "episode_lease_check", "episode_lease_renew", "episode_release", "episode_return",
	"episode_requeue", "queue_depth", "entity_neighbourhood", "episode_usage",
	"graph_save", "entity_summary_sources", "entity_summary_set", "episode_context_users", "episode_requeue_context_users",
	"search_small", "fact_search_text", "fact_search_vector", "entity_search_text", "entity_search_vector", "graph_expand", "graph_search",
	"fact_get", "entity_get", "fact_list", "entity_list",
	"conflict_list", "conflict_lock", "conflict_resolve", "conflict_prune",
	"requester_agents", "requester_erase_lock", "requester_erasure", "requester_pseudonymize", "requester_erase",
	"requester_audit_events", "requester_audit_rewrite",
	"webhook_create", "webhook_list", "webhook_get", "webhook_delete", "webhook_deliveries",
	"webhook_claim", "webhook_finish", "webhook_prune",
}

// Open creates the driver and loads the queries. It does not wait for Neo4j: a
// service may start before its database and become ready when the database does.
func Open(opts Options, log *slog.Logger) (*DB, error) {
	queries, err := cypher.Load(queryNames...)
	if err != nil {
		return nil, err
	}
	auth := neo4j.NoAuth()
	if opts.Password != "" {
		auth = neo4j.BasicAuth(opts.User, opts.Password, "")
	}
	driver, err := neo4j.NewDriverWithContext(opts.URI, auth, func(c *neo4jconfig.Config) {
		if opts.MaxPoolSize > 0 {
			c.MaxConnectionPoolSize = opts.MaxPoolSize
		}
		if opts.MaxRetryTime > 0 {
			c.MaxTransactionRetryTime = opts.MaxRetryTime
		}
		if opts.ConnectTimeout > 0 {
			c.SocketConnectTimeout = opts.ConnectTimeout
			c.ConnectionAcquisitionTimeout = opts.ConnectTimeout
		}
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: %w", err)
	}
	// The driver sets up its dialer lazily on the first connection attempt, and two
	// first attempts at once race on it (go test -race reports it). One attempt here,
	// before anything else can use the driver, settles it; whether Neo4j answers does
	// not matter yet.
	ctx, cancel := context.WithTimeout(context.Background(), max(opts.ConnectTimeout, time.Second))
	_ = driver.VerifyConnectivity(ctx)
	cancel()
	db := &DB{driver: driver, database: opts.Database, queries: queries, log: log,
		bookmarks: neo4j.NewBookmarkManager(neo4j.BookmarkManagerConfig{})}
	tp := opts.Tracer
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	db.tracer = tp.Tracer("github.com/memgate/memgate/graph/neo4jstore")
	db.spanAttrs = []attribute.KeyValue{attribute.String("db.system.name", "neo4j")}
	if opts.Database != "" {
		db.spanAttrs = append(db.spanAttrs, attribute.String("db.namespace", opts.Database))
	}
	db.commits = db.newCommits()
	db.principals = batch.New(maxGroup, groupCommitTimeout, db.resolveTogether)
	db.finishes = batch.New(maxGroup, groupCommitTimeout, db.finishTogether)
	return db, nil
}

// Close waits for the group commits and reads under way, then closes the driver, within ctx's
// deadline.
func (db *DB) Close(ctx context.Context) error {
	waited := errors.Join(db.commits.Close(ctx), db.principals.Close(ctx), db.finishes.Close(ctx))
	return errors.Join(waited, db.driver.Close(ctx))
}

// run executes one named query in a managed transaction (retried by the driver on
// transient errors) and returns its records.
func (db *DB) run(ctx context.Context, mode neo4j.AccessMode, name string, params map[string]any) ([]*neo4j.Record, error) {
	defer db.observe(name, time.Now())
	text := db.queries.Get(name)
	first, err := db.firsts.begin(ctx, name, text)
	if err != nil {
		return nil, db.storeError(name, err)
	}
	ctx, span := db.startQuery(ctx, name)
	res, err := neo4j.ExecuteQuery(ctx, db.driver, text, params,
		neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(db.database),
		neo4j.ExecuteQueryWithBookmarkManager(db.bookmarksFor(ctx)),
		routing(mode))
	if first {
		db.firsts.end(name, err == nil)
	}
	if err != nil {
		endQuery(span, 0, err)
		return nil, db.storeError(name, err)
	}
	endQuery(span, len(res.Records), nil)
	var w wakeup
	w.add(name, params)
	w.notify()
	return res.Records, nil
}

// readOnce executes one named read query as an auto-commit transaction: one round
// trip to Neo4j where run's managed transaction takes two (its COMMIT waits apart).
// For the reads every request makes (principal resolution). The driver does not
// retry an auto-commit query, so a retryable failure runs it again through run.
func (db *DB) readOnce(ctx context.Context, name string, params map[string]any) ([]*neo4j.Record, error) {
	records, err := db.autoCommit(ctx, neo4j.AccessModeRead, name, params)
	if err != nil && neo4j.IsRetryable(err) {
		return db.run(ctx, neo4j.AccessModeRead, name, params)
	}
	if err != nil {
		return nil, db.storeError(name, err)
	}
	return records, nil
}

// autoCommit runs one named query as an auto-commit transaction and collects its
// records; the error is the driver's.
func (db *DB) autoCommit(ctx context.Context, mode neo4j.AccessMode, name string, params map[string]any) ([]*neo4j.Record, error) {
	defer db.observe(name, time.Now())
	text := db.queries.Get(name)
	first, err := db.firsts.begin(ctx, name, text)
	if err != nil {
		return nil, err
	}
	ctx, span := db.startQuery(ctx, name)
	session := db.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: db.database,
		AccessMode: mode, BookmarkManager: db.bookmarksFor(ctx)})
	defer func() { _ = session.Close(context.WithoutCancel(ctx)) }()
	res, err := session.Run(ctx, text, params)
	var records []*neo4j.Record
	if err == nil {
		records, err = res.Collect(ctx)
	}
	if first {
		db.firsts.end(name, err == nil)
	}
	endQuery(span, len(records), err)
	return records, err
}

// inWrite runs fn in one managed write transaction, retried by the driver on
// transient errors (so fn must be safe to run again).
func (db *DB) inWrite(ctx context.Context, fn func(tx neo4j.ManagedTransaction) (any, error)) (any, error) {
	return db.inTx(ctx, neo4j.AccessModeWrite, fn)
}

// inTx runs fn in one managed transaction of mode (inWrite, inRead).
func (db *DB) inTx(ctx context.Context, mode neo4j.AccessMode, fn func(tx neo4j.ManagedTransaction) (any, error)) (any, error) {
	session := db.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: db.database, AccessMode: mode,
		BookmarkManager: db.bookmarksFor(ctx)})
	execute := session.ExecuteWrite
	if mode == neo4j.AccessModeRead {
		execute = session.ExecuteRead
	}
	var queued wakeup // added to by txRun when fn runs a queuing query
	out, err := execute(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		return fn(&queuingTx{tx, &queued})
	})
	closeErr := session.Close(context.WithoutCancel(ctx))
	if err != nil {
		return nil, db.storeError("transaction", err)
	}
	queued.notify()
	if closeErr != nil {
		db.log.WarnContext(ctx, "closing a session", "error", closeErr.Error())
	}
	return out, nil
}

// queuingTx is inTx's transaction: it notes the queuing queries run in it, so that
// their idle runners are woken once it has committed.
type queuingTx struct {
	neo4j.ManagedTransaction
	queued *wakeup
}

// txRun runs one named query inside a transaction and collects its records.
func (db *DB) txRun(ctx context.Context, tx neo4j.ManagedTransaction, name string, params map[string]any) ([]*neo4j.Record, error) {
	defer db.observe(name, time.Now())
	if q, ok := tx.(*queuingTx); ok {
		q.queued.add(name, params)
	}
	ctx, span := db.startQuery(ctx, name)
	res, err := tx.Run(ctx, db.queries.Get(name), params)
	if err != nil {
		endQuery(span, 0, err)
		return nil, fmt.Errorf("query %s: %w", name, err)
	}
	records, err := res.Collect(ctx)
	endQuery(span, len(records), err)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", name, err)
	}
	return records, nil
}

// routing sends reads to readers and writes to the leader on a cluster (neo4j://).
func routing(mode neo4j.AccessMode) neo4j.ExecuteQueryConfigurationOption {
	if mode == neo4j.AccessModeRead {
		return neo4j.ExecuteQueryWithReadersRouting()
	}
	return neo4j.ExecuteQueryWithWritersRouting()
}

// storeError turns a driver error into a graph.Error: unreachable database and
// expired deadlines are EUNAVAILABLE (the client may retry), the rest EINTERNAL.
// The driver's text stays in the wrapped error for the logs.
func (db *DB) storeError(query string, err error) error {
	var ge *graph.Error
	if errors.As(err, &ge) {
		return err
	}
	if unreachable(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return graph.Wrap(graph.EUNAVAILABLE, fmt.Errorf("query %s: %w", query, err), "the database is unavailable; retry later")
	}
	return graph.Wrap(graph.EINTERNAL, fmt.Errorf("query %s: %w", query, err), "internal error")
}

// unreachable reports whether err says Neo4j could not be reached or the connection
// was lost: the driver's connectivity errors and exhausted retries, and what a socket
// closed under a query gives, which the driver passes on as it is (an end of file
// mid-answer, a reset). A write that met one may or may not have committed; the
// client sends it again with its Idempotency-Key.
func unreachable(err error) bool {
	var conn *neo4j.ConnectivityError
	var limit *neo4j.TransactionExecutionLimit
	var netErr net.Error
	return errors.As(err, &conn) || errors.As(err, &limit) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}
