package handlers

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
)

// Metrics is what GET /metrics exposes in the Prometheus format: the HTTP requests and
// denials it counts itself, and at each scrape the ingestion counters, the queue
// depth and the Neo4j query timings read from where they are kept.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.HistogramVec
	denials  *prometheus.CounterVec
	webhooks *prometheus.CounterVec
}

// Observed is where the scrape reads what other parts count.
type Observed struct {
	Pipeline *extract.Metrics // nil: no ingestion in this process
	Queue    graph.Queue      // for the queue depth
	// Queries calls fn for every named Neo4j query that ran: calls and total time.
	Queries func(fn func(name string, calls int64, total time.Duration))
}

// NewMetrics registers memgate's metrics and the Go runtime's.
func NewMetrics(o Observed) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "memgate_http_request_duration_seconds", Help: "HTTP requests by route, method and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method", "status"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memgate_denials_total", Help: "Requests refused with 403, each also an audit event, by the event's kind (namespace_denied, requester_denied), the kind of space refused and the route pattern.",
		}, []string{"kind", "space", "route"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memgate_webhook_deliveries_total", Help: "Webhook delivery outcomes of this process: delivered, retry, failed (given up at webhooks.horizon), dropped (the subscriber may no longer see the space), error (the check could not be made).",
		}, []string{"outcome"}),
	}
	m.registry.MustRegister(m.requests, m.denials, m.webhooks, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		scraped{o})
	return m
}

// Denied counts a refusal (service.Service.OnDeny) of the audit event kind, in the
// space with groupID ("" when the refusal is not about a space), of the request ctx
// belongs to. Every label is from a closed set: the kind, the kind of space, the route
// pattern (none outside a request); never an id, a name or a reason's text, so the
// series stay bounded and name no one.
func (m *Metrics) Denied(ctx context.Context, kind, groupID string) {
	space := "none"
	if s, ok := graph.ParseGroupID(groupID); ok {
		space = string(s.Kind)
	}
	if kind != graph.AuditNamespaceDenied && kind != graph.AuditRequesterDenied {
		kind = "other"
	}
	route, _ := ctx.Value(routeKey{}).(string)
	if route == "" {
		route = "none"
	}
	m.denials.WithLabelValues(kind, space, route).Inc()
}

// routeKey holds a request's route pattern in its context, for Denied.
type routeKey struct{}

// WebhookOutcome counts one webhook delivery attempt's outcome (webhook.Deliverer's
// OnAttempt).
func (m *Metrics) WebhookOutcome(outcome string) {
	m.webhooks.WithLabelValues(outcome).Inc()
}

// handler serves the scrape; with keySHA256 (hex) set, only to a request whose
// "Authorization: Bearer <key>" hashes to it (401 otherwise).
func (m *Metrics) handler(keySHA256 string) echo.HandlerFunc {
	scrape := echo.WrapHandler(promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{}))
	if keySHA256 == "" {
		return scrape
	}
	want, _ := hex.DecodeString(keySHA256)
	return func(c echo.Context) error {
		h := c.Request().Header.Values(echo.HeaderAuthorization)
		scheme, key, _ := strings.Cut(strings.Join(h, ""), " ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(key)))
		if len(h) != 1 || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], want) != 1 {
			return graph.Errorf(graph.EUNAUTHENTICATED, "/metrics needs its key: Authorization: Bearer <server.metrics_key_sha256's key>")
		}
		return scrape(c)
	}
}

// MetricsServer is the handler of a listener of its own for /metrics
// (server.metrics_addr): that route alone, with the key when keySHA256 is set.
func MetricsServer(m *Metrics, keySHA256 string, log *slog.Logger) http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(log)
	e.GET("/metrics", m.handler(keySHA256))
	return e
}

// observe is the middleware timing every request by its route pattern (never the raw
// path, which would make a series per id).
func (m *Metrics) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		r := c.Request()
		c.SetRequest(r.WithContext(context.WithValue(r.Context(), routeKey{}, route)))
		err := next(c)
		status := c.Response().Status
		if err != nil {
			status, _, _ = classify(err)
		}
		m.requests.WithLabelValues(route, methodLabel(c.Request().Method), strconv.Itoa(status)).Observe(time.Since(start).Seconds())
		return err
	}
}

// methodLabel is a request's method as a label: one of HTTP's, else "other" (a
// client may send any word as its method).
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return method
	}
	return "other"
}

var (
	descProcessed  = prometheus.NewDesc("memgate_ingest_processed_total", "Episodes processed to done.", nil, nil)
	descFailed     = prometheus.NewDesc("memgate_ingest_failed_total", "Episodes failed for good (after every attempt).", nil, nil)
	descRetried    = prometheus.NewDesc("memgate_ingest_retried_total", "Attempts that failed and will be retried.", nil, nil)
	descClaimed    = prometheus.NewDesc("memgate_ingest_claimed_total", "Episodes leased by this process's claims.", nil, nil)
	descConflicts  = prometheus.NewDesc("memgate_ingest_claim_conflicts_total", "Episodes a claim chose but found taken by another worker (another process) when it locked them: lease conflicts.", nil, nil)
	descLeaseLost  = prometheus.NewDesc("memgate_ingest_leases_lost_total", "Attempts whose lease another worker had taken by their save (an expired lease reclaimed): the work is dropped, not saved twice.", nil, nil)
	descProcessing = prometheus.NewDesc("memgate_ingest_processing_seconds_total", "Time spent on successful attempts.", nil, nil)
	descLLMCalls   = prometheus.NewDesc("memgate_llm_calls_total", "Calls to the model provider, by kind: chat (extraction, resolution) or embedding.", []string{"kind"}, nil)
	descLLMErrors  = prometheus.NewDesc("memgate_llm_errors_total", "Failed LLM calls by kind.", []string{"kind"}, nil)
	descTokens     = prometheus.NewDesc("memgate_llm_tokens_total", "Model tokens by kind of call (chat, embedding) and direction (prompt, output).", []string{"kind", "direction"}, nil)
	descDropped    = prometheus.NewDesc("memgate_extraction_dropped_total", "Entities, facts, summary sentences, attributes and edge types of extraction output dropped before resolution, by what (entity, fact, summary, attribute, edge_type) and why (unknown_entity, same_entity, bad_relation, wrong_types, empty_name, over_limit, ungrounded, unstated, unknown_attribute, wrong_type).", []string{"what", "reason"}, nil)
	descQueue      = prometheus.NewDesc("memgate_ingest_queue_depth", "Episodes not done, by status, in every space.", []string{"status"}, nil)
	descQueries    = prometheus.NewDesc("memgate_neo4j_queries_total", "Neo4j queries run, by query file.", []string{"query"}, nil)
	descQueryTime  = prometheus.NewDesc("memgate_neo4j_query_seconds_total", "Time in Neo4j queries, by query file (divide by memgate_neo4j_queries_total for the mean latency).", []string{"query"}, nil)
)

// scraped collects, at each scrape, the values kept elsewhere.
type scraped struct{ o Observed }

func (s scraped) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descProcessed, descFailed, descRetried, descClaimed, descConflicts, descLeaseLost, descProcessing, descLLMCalls,
		descLLMErrors, descTokens, descDropped, descQueue, descQueries, descQueryTime} {
		ch <- d
	}
}

func (s scraped) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	if p := s.o.Pipeline; p != nil {
		counter(descProcessed, float64(p.Processed.Load()))
		counter(descFailed, float64(p.Failed.Load()))
		counter(descRetried, float64(p.Retried.Load()))
		counter(descClaimed, float64(p.Claimed.Load()))
		counter(descConflicts, float64(p.ClaimConflicts.Load()))
		counter(descLeaseLost, float64(p.LeasesLost.Load()))
		counter(descProcessing, time.Duration(p.ProcessingNano.Load()).Seconds())
		counter(descLLMCalls, float64(p.ChatCalls.Load()), "chat")
		counter(descLLMCalls, float64(p.EmbeddingCalls.Load()), "embedding")
		counter(descTokens, float64(p.ChatPromptTokens.Load()), "chat", "prompt")
		counter(descTokens, float64(p.ChatOutputTokens.Load()), "chat", "output")
		counter(descTokens, float64(p.EmbeddingTokens.Load()), "embedding", "prompt")
		p.LLMErrors.Range(func(k, v any) bool {
			counter(descLLMErrors, float64(v.(*atomic.Int64).Load()), k.(string))
			return true
		})
		p.Drops.Range(func(k, v any) bool {
			what, reason, _ := strings.Cut(k.(string), "/")
			counter(descDropped, float64(v.(*atomic.Int64).Load()), what, reason)
			return true
		})
	}
	if s.o.Queue != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if depth, err := s.o.Queue.QueueDepth(ctx, ""); err == nil {
			for _, status := range []string{graph.StatusQueued, graph.StatusProcessing, graph.StatusFailed} {
				ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(depth[status]), status)
			}
		}
	}
	if s.o.Queries != nil {
		s.o.Queries(func(name string, calls int64, total time.Duration) {
			counter(descQueries, float64(calls), name)
			counter(descQueryTime, total.Seconds(), name)
		})
	}
}
