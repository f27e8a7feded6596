package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/access/idp"
	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/config"
	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/handlers"
	"github.com/memgate/memgate/service"
	"github.com/memgate/memgate/webhook"
)

// Main is the running service: configuration, the store and the HTTP server. Tests
// start it on 127.0.0.1:0 and read Addr.
type Main struct {
	Config  *config.Config
	Log     *slog.Logger
	DB      *neo4jstore.DB
	Metrics *extract.Metrics
	// Tracer, when set, receives every span (tests set an in-memory one); nil: the
	// OTEL_* environment decides (tracing.go), and without it tracing is off.
	Tracer trace.TracerProvider

	server   *http.Server
	listener net.Listener
	// metricsServer serves /metrics on server.metrics_addr, when it is set.
	metricsServer   *http.Server
	metricsListener net.Listener
	fatal           chan error
	cancel          context.CancelFunc
	wg              sync.WaitGroup
	tracing         *sdktrace.TracerProvider // made from the environment: flushed and shut down by Close
}

func NewMain(cfg *config.Config, log *slog.Logger) *Main {
	return &Main{Config: cfg, Log: log, fatal: make(chan error, 2)}
}

// Open connects the pieces and starts serving. It returns once the listener is bound;
// Neo4j need not be up yet (readyz says when it is).
func (m *Main) Open(ctx context.Context) error {
	cfg := m.Config
	ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if m.Tracer == nil {
		var err error
		if m.tracing, err = newTracerProvider(ctx, os.Getenv, m.Log); err != nil {
			m.cancel()
			return err
		}
		if m.tracing != nil {
			m.Tracer = m.tracing
		}
	}
	if m.Tracer != nil {
		m.Log = slog.New(traceLog{m.Log.Handler()})
	}
	keys, err := newKeyring(ctx, cfg.Auth, m.Log)
	var tokens *service.Tokenizer
	if err == nil {
		tokens, err = service.NewTokenizer(cfg.Memory.ContextTokenizer)
		if err != nil {
			err = fmt.Errorf("memory.context_tokenizer: %w", err)
		}
	}
	if err == nil {
		m.DB, err = openDB(cfg, m.Log, m.Tracer)
	}
	if err != nil {
		m.cancel()
		if m.tracing != nil {
			_ = m.tracing.Shutdown(context.Background()) // nothing was traced yet
		}
		return err
	}
	if cfg.Neo4j.MigrateOnStart {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.migrateUntilDone(ctx)
		}()
	}
	m.Metrics = &extract.Metrics{}
	embedder := newEmbedder(cfg, m.Metrics, m.Log, m.Tracer, tokens.Count)
	llm := newLLM(cfg, m.Metrics, m.Log, m.Tracer, tokens.Count)
	if cfg.Ingest.Workers > 0 {
		runner := newRunner(cfg, m.DB, embedder, llm, m.Metrics, m.Log)
		runner.Tracer = m.Tracer
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			runner.Run(ctx)
		}()
	}

	svc := newService(cfg, m.DB, embedder, m.Log)
	svc.Tokens = tokens
	svc.Tracer = m.Tracer
	if llm != nil {
		svc.Summarizer = llm
	}
	metrics := handlers.NewMetrics(handlers.Observed{Pipeline: m.Metrics, Queue: m.DB,
		Queries: func(fn func(string, int64, time.Duration)) {
			m.DB.QueryStats(func(name string, s *neo4jstore.QueryStat) { fn(name, s.Count.Load(), time.Duration(s.Nanos.Load())) })
		}})
	svc.OnDeny = metrics.Denied
	guard := webhook.Guard{AllowLoopback: cfg.Webhooks.AllowLoopback, Allow: cfg.Webhooks.Networks()}
	svc.Hooks, svc.Hosts, svc.CheckWebhookURL = m.DB, keys, guard.CheckURL
	if cfg.Webhooks.Workers > 0 {
		deliverer := newDeliverer(cfg, m.DB, svc, guard, m.Log)
		deliverer.OnAttempt = metrics.WebhookOutcome
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			deliverer.Run(ctx)
		}()
	}
	if cfg.Memory.ExpirySweep > 0 {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			svc.RunExpirySweeper(ctx, cfg.Memory.ExpirySweep)
		}()
	}
	e := handlers.New(handlers.Deps{
		Log: m.Log, Keys: keys, Ready: m.DB, Consistency: m.DB, Service: svc, BodyLimit: cfg.Server.BodyLimit,
		HandlerTimeout: cfg.Server.HandlerTimeout, Version: buildVersion(), Metrics: metrics,
		RateLimit: cfg.Server.RateLimit, RateBurst: cfg.Server.RateBurst, Tracer: m.Tracer,
		MetricsKeySHA256: cfg.Server.MetricsKeySHA256, MetricsApart: cfg.Server.MetricsAddr != "",
	})
	if cfg.Server.MetricsAddr != "" {
		if err := m.serveMetrics(cfg, handlers.MetricsServer(metrics, cfg.Server.MetricsKeySHA256, m.Log)); err != nil {
			return err
		}
	}
	m.listener, err = net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Server.Addr, err)
	}
	m.server = &http.Server{
		Handler:           e,
		ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout,
		ReadTimeout:       cfg.Server.ReadTimeout,
		WriteTimeout:      cfg.Server.WriteTimeout,
		IdleTimeout:       cfg.Server.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn),
	}
	if keys.DevMode() {
		m.Log.Warn("DEV MODE: no host keys configured; every request is treated as a trusted admin host. Listening on loopback only.",
			"addr", m.listener.Addr().String())
	}
	m.Log.Info("memgate listening", "addr", m.listener.Addr().String(), "version", buildVersion(),
		"neo4j_uri", cfg.Neo4j.URI, "llm_provider", cfg.LLM.Provider, "embedder_provider", cfg.Embedder.Provider)
	go func() {
		if err := m.server.Serve(m.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.fatal <- fmt.Errorf("http server: %w", err)
		}
	}()
	return nil
}

// serveMetrics serves /metrics on server.metrics_addr, a listener of its own.
func (m *Main) serveMetrics(cfg *config.Config, h http.Handler) error {
	l, err := net.Listen("tcp", cfg.Server.MetricsAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (server.metrics_addr): %w", cfg.Server.MetricsAddr, err)
	}
	m.metricsListener = l
	m.metricsServer = &http.Server{Handler: h, ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout,
		ReadTimeout: cfg.Server.ReadTimeout, WriteTimeout: cfg.Server.WriteTimeout, IdleTimeout: cfg.Server.IdleTimeout,
		ErrorLog: slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn)}
	m.Log.Info("memgate serves /metrics apart", "addr", l.Addr().String())
	go func() {
		if err := m.metricsServer.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.fatal <- fmt.Errorf("metrics server: %w", err)
		}
	}()
	return nil
}

// Addr is the address the server listens on.
func (m *Main) Addr() string { return m.listener.Addr().String() }

// MetricsAddr is the address /metrics listens on apart, "" when it is served on Addr.
func (m *Main) MetricsAddr() string {
	if m.metricsListener == nil {
		return ""
	}
	return m.metricsListener.Addr().String()
}

// Fatal delivers an error after which the service cannot go on.
func (m *Main) Fatal() <-chan error { return m.fatal }

// Close stops accepting requests, lets the ones in flight finish within ctx, stops the
// background work and closes the store.
func (m *Main) Close(ctx context.Context) error {
	var errs []error
	if m.server != nil {
		errs = append(errs, m.server.Shutdown(ctx))
	}
	if m.metricsServer != nil {
		errs = append(errs, m.metricsServer.Shutdown(ctx))
	}
	if m.cancel != nil {
		m.cancel()
	}
	m.wg.Wait()
	if m.DB != nil {
		errs = append(errs, m.DB.Close(ctx))
	}
	if m.tracing != nil {
		// The last spans go out, within a few seconds: a collector that is away costs
		// them (and a warning), never the shutdown's time or its exit code.
		flushCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := m.tracing.Shutdown(flushCtx); err != nil {
			m.Log.Warn("flushing the last spans", "error", err.Error())
		}
		cancel()
	}
	return errors.Join(errs...)
}

// migrateUntilDone applies the schema, retrying while Neo4j is unavailable (the
// service may start before its database). Any other failure, such as a vector
// dimension that does not match the existing index, stops the service.
func (m *Main) migrateUntilDone(ctx context.Context) {
	err := client.Backoff{First: time.Second, Max: 15 * time.Second,
		Again: func(err error) bool { return graph.ErrorCode(err) == graph.EUNAVAILABLE },
		Waiting: func(err error, wait time.Duration) {
			m.Log.Warn("schema migration waits for neo4j", "error", err.Error(), "retry_in", wait.Round(time.Millisecond).String())
		},
	}.Retry(ctx, func() error {
		attemptCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return m.DB.Migrate(attemptCtx, m.Config.Embedder.Dimensions)
	})
	if err != nil && ctx.Err() == nil {
		m.fatal <- fmt.Errorf("schema migration: %w", err)
		return
	}
	if err == nil {
		m.checkEmbedder(ctx)
	}
}

// checkEmbedder warns when the database's vectors were made by another embedder than
// the configured one (neo4jstore.DB.EmbeddedBy): vectors of two models, or of one
// model with other prefixes, are not comparable, so vector search would rank them by
// chance. The warning stays until the vectors are made anew (a fresh database).
func (m *Main) checkEmbedder(ctx context.Context) {
	e := m.Config.Embedder
	name := e.Provider
	if e.Provider == config.ProviderOpenAI {
		name = fmt.Sprintf("%s query_prefix=%q document_prefix=%q", e.Model, e.QueryPrefix, e.DocumentPrefix)
	}
	recorded, err := m.DB.EmbeddedBy(ctx, name)
	switch {
	case err != nil:
		m.Log.Warn("could not read which embedder made the stored vectors", "error", err.Error())
	case recorded != name:
		m.Log.Warn("the stored vectors were made by another embedder: vector search compares them with this one's and ranks them by chance until they are made anew (see docs/operations.md)",
			"stored_by", recorded, "embedder", name)
	}
}

func newService(cfg *config.Config, db *neo4jstore.DB, embedder extract.Embedder, log *slog.Logger) *service.Service {
	return &service.Service{
		Auth: access.Policy{AllowPrivate: cfg.Memory.AllowPrivate},
		Dir:  db, Mem: db, Find: db, Queue: db, Audit: db, Embedder: embedder, Summarizer: extract.Extractive{},
		Log: log, Now: time.Now, Ontology: graph.Ontology{EntityTypes: entityTypes(cfg), EdgeTypes: edgeTypes(cfg)},
		Limits: service.Limits{
			DefaultVisibility: cfg.Memory.DefaultVisibility, RefuseCredentials: cfg.Memory.RefuseCredentials,
			MaxContentBytes: cfg.Memory.MaxContentBytes, BatchMaxItems: cfg.Memory.BatchMaxItems,
			PageSizeDefault: cfg.Memory.PageSizeDefault, PageSizeMax: cfg.Memory.PageSizeMax, MaxVersions: cfg.Memory.MaxVersions,
			PublicWritesPerDay: cfg.Limits.PublicWritesPerAgentPerDay, VisibilityRules: visibilityRules(cfg.Memory.VisibilityRules),
		},
	}
}

// newDeliverer builds the sender of the webhook outbox.
func newDeliverer(cfg *config.Config, db *neo4jstore.DB, svc *service.Service, guard webhook.Guard, log *slog.Logger) *webhook.Deliverer {
	w := cfg.Webhooks
	return &webhook.Deliverer{Store: db, Service: svc, Guard: guard, Log: log, Workers: w.Workers, Timeout: w.Timeout,
		Poll: w.Poll, BackoffMin: w.BackoffMin, BackoffMax: w.BackoffMax, Horizon: w.Horizon, Retention: w.Retention, Scope: w.Scope}
}

// visibilityRules compiles memory.visibility_rules (config.Load has checked them).
func visibilityRules(rules []config.VisibilityRule) []service.VisibilityRule {
	out := make([]service.VisibilityRule, len(rules))
	for i, r := range rules {
		out[i] = service.VisibilityRule{Name: r.Name, Pattern: regexp.MustCompile(r.Pattern)}
	}
	return out
}

// newEmbedder builds the configured embedder: an OpenAI-compatible endpoint, or the
// offline hashing embedder. Ingestion embeds names and facts with it, search queries.
// count counts the tokens of a call whose answer reports none (both here and in newLLM).
func newEmbedder(cfg *config.Config, metrics *extract.Metrics, log *slog.Logger, tp trace.TracerProvider, count func(string) int) extract.Embedder {
	if cfg.Embedder.Provider == config.ProviderOpenAI {
		return extract.NewOpenAI(extract.OpenAIOptions{
			BaseURL: cfg.Embedder.BaseURL, APIKey: cfg.Embedder.APIKey, Model: cfg.Embedder.Model,
			Timeout: cfg.Embedder.Timeout, MaxConcurrency: cfg.LLM.MaxConcurrency, MaxRetries: cfg.LLM.MaxRetries,
			Dimensions: cfg.Embedder.Dimensions, Metrics: metrics, Log: log, Tracer: tp, CountTokens: count,
			QueryPrefix: cfg.Embedder.QueryPrefix, DocumentPrefix: cfg.Embedder.DocumentPrefix,
		}, nil)
	}
	return extract.Hashing{Dimensions: cfg.Embedder.Dimensions}
}

// newLLM builds the OpenAI-compatible client of llm.provider openai (extraction,
// resolution, compaction), or nil for the offline providers.
func newLLM(cfg *config.Config, metrics *extract.Metrics, log *slog.Logger, tp trace.TracerProvider, count func(string) int) *extract.OpenAI {
	if cfg.LLM.Provider != config.ProviderOpenAI {
		return nil
	}
	return extract.NewOpenAI(extract.OpenAIOptions{
		BaseURL: cfg.LLM.BaseURL, APIKey: cfg.LLM.APIKey, Model: cfg.LLM.Model, Timeout: cfg.LLM.Timeout,
		MaxConcurrency: cfg.LLM.MaxConcurrency, MaxRetries: cfg.LLM.MaxRetries, Metrics: metrics, Log: log,
		StructuredOutput: cfg.LLM.StructuredOutput, MaxTokens: cfg.LLM.MaxTokens, Tracer: tp, EdgeTypes: edgeTypes(cfg),
		CountTokens: count,
	}, entityTypes(cfg))
}

// entityTypes are ingest.entity_types (config.Load has checked them), or the built-in
// ones when it names none.
func entityTypes(cfg *config.Config) []extract.EntityType {
	if len(cfg.Ingest.EntityTypes) == 0 {
		return extract.DefaultEntityTypes
	}
	types := make([]extract.EntityType, len(cfg.Ingest.EntityTypes))
	for i, t := range cfg.Ingest.EntityTypes {
		types[i] = extract.EntityType{Name: t.Name, Description: t.Description, Attributes: attributes(t.Attributes)}
	}
	return types
}

// edgeTypes are ingest.edge_types.
func edgeTypes(cfg *config.Config) []extract.EdgeType {
	var types []extract.EdgeType
	for _, t := range cfg.Ingest.EdgeTypes {
		types = append(types, extract.EdgeType{Name: t.Name, Description: t.Description, SourceTypes: t.SourceTypes,
			TargetTypes: t.TargetTypes, Attributes: attributes(t.Attributes)})
	}
	return types
}

func attributes(attrs []config.Attribute) []graph.Attribute {
	var out []graph.Attribute
	for _, a := range attrs {
		out = append(out, graph.Attribute{Name: a.Name, Type: a.Type, Description: a.Description, Values: a.Values})
	}
	return out
}

// newRunner builds the ingestion pipeline: the LLM's extraction (checked by the
// offline rules with llm.rules), or without one the offline extractor.
func newRunner(cfg *config.Config, db *neo4jstore.DB, embedder extract.Embedder, llm *extract.OpenAI, metrics *extract.Metrics,
	log *slog.Logger) *extract.Runner {
	var extractor extract.Extractor = extract.Heuristic{}
	var deduper extract.Deduper // the heuristic path has none: ambiguous names stay apart
	var judge extract.Judge = extract.Exclusive
	if llm != nil {
		extractor, deduper, judge = llm, llm, llm
		if cfg.LLM.Rules {
			extractor = extract.WithRules{Model: llm}
		}
	}
	return &extract.Runner{
		Queue: db, Extractor: extractor, Types: entityTypes(cfg), EdgeTypes: edgeTypes(cfg),
		Resolver: &extract.Resolver{Know: db, Embedder: embedder, Deduper: deduper, Judge: judge, Now: time.Now,
			Review: cfg.Memory.Conflicts == "review"},
		Workers: cfg.Ingest.Workers, Lease: cfg.Ingest.Lease, MaxAttempts: cfg.Ingest.MaxAttempts,
		Backoff: cfg.Ingest.Backoff, Poll: cfg.Ingest.Poll, Scope: cfg.Ingest.Scope, Log: log, Metrics: metrics,
	}
}

func openDB(cfg *config.Config, log *slog.Logger, tp trace.TracerProvider) (*neo4jstore.DB, error) {
	return neo4jstore.Open(neo4jstore.Options{
		URI: cfg.Neo4j.URI, User: cfg.Neo4j.User, Password: cfg.Neo4j.Password, Database: cfg.Neo4j.Database,
		MaxPoolSize: cfg.Neo4j.MaxPoolSize, ConnectTimeout: cfg.Neo4j.ConnectTimeout, MaxRetryTime: cfg.Neo4j.MaxRetryTime,
		Tracer: tp,
	}, log)
}

// newKeyring builds the host keys and, when auth.jwt is set, the identity provider's
// verifier; a URL's keys are fetched in the background until ctx ends.
func newKeyring(ctx context.Context, auth config.Auth, log *slog.Logger) (*access.Keyring, error) {
	specs := auth.Keys
	if !auth.JWT.Enabled() {
		return access.NewKeyring(specs, nil)
	}
	j := auth.JWT
	v, err := idp.New(ctx, idp.Options{Issuer: j.Issuer, Audience: j.Audience, JWKSFile: j.JWKSFile, JWKSURL: j.JWKSURL,
		Refresh: j.Refresh, Claim: j.Claim, RequesterPrefix: j.RequesterPrefix, OrgClaim: j.OrgClaim, Log: log})
	if err != nil {
		return nil, err
	}
	return access.NewKeyring(specs, v)
}
