package handlers

import (
	"context"
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
			Name: "memgate_denials_total", Help: "Requests refused with 403 (each also audited as namespace_denied), by the kind of space refused and the reason.",
		}, []string{"space", "reason"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memgate_webhook_deliveries_total", Help: "Webhook delivery outcomes of this process: delivered, retry, failed (given up at webhooks.horizon), dropped (the subscriber may no longer see the space), error (the check could not be made).",
		}, []string{"outcome"}),
	}
	m.registry.MustRegister(m.requests, m.denials, m.webhooks, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		scraped{o})
	return m
}

// Denied counts a refusal in the space with groupID ("" when the refusal is not about
// a space) for reason. The Authorizer's reasons are a fixed set of sentences, some
// naming the team refused; the team's name is left out of the label, so the number of
// series stays bounded.
func (m *Metrics) Denied(groupID, reason string) {
	kind := "none"
	if s, ok := graph.ParseGroupID(groupID); ok {
		kind = string(s.Kind)
		if s.Kind == graph.SpaceTeam {
			reason = strings.TrimSuffix(reason, " "+s.Team)
		}
	}
	m.denials.WithLabelValues(kind, reason).Inc()
}

// WebhookOutcome counts one webhook delivery attempt's outcome (webhook.Deliverer's
// OnAttempt).
func (m *Metrics) WebhookOutcome(outcome string) {
	m.webhooks.WithLabelValues(outcome).Inc()
}

func (m *Metrics) handler() echo.HandlerFunc {
	return echo.WrapHandler(promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{}))
}

// observe is the middleware timing every request by its route pattern (never the raw
// path, which would make a series per id).
func (m *Metrics) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		status := c.Response().Status
		if err != nil {
			status, _, _ = classify(err)
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		m.requests.WithLabelValues(route, c.Request().Method, strconv.Itoa(status)).Observe(time.Since(start).Seconds())
		return err
	}
}

var (
	descProcessed  = prometheus.NewDesc("memgate_ingest_processed_total", "Episodes processed to done.", nil, nil)
	descFailed     = prometheus.NewDesc("memgate_ingest_failed_total", "Episodes failed for good (after every attempt).", nil, nil)
	descRetried    = prometheus.NewDesc("memgate_ingest_retried_total", "Attempts that failed and will be retried.", nil, nil)
	descProcessing = prometheus.NewDesc("memgate_ingest_processing_seconds_total", "Time spent on successful attempts.", nil, nil)
	descLLMCalls   = prometheus.NewDesc("memgate_llm_calls_total", "Calls to the model provider, by kind: chat (extraction, resolution) or embedding.", []string{"kind"}, nil)
	descLLMErrors  = prometheus.NewDesc("memgate_llm_errors_total", "Failed LLM calls by kind.", []string{"kind"}, nil)
	descTokens     = prometheus.NewDesc("memgate_llm_tokens_total", "Model tokens by kind of call (chat, embedding) and direction (prompt, output).", []string{"kind", "direction"}, nil)
	descDropped    = prometheus.NewDesc("memgate_extraction_dropped_total", "Entities, facts, attributes and edge types of extraction output dropped before resolution, by what (entity, fact, attribute, edge_type) and why (unknown_entity, same_entity, bad_relation, wrong_types, empty_name, over_limit, unknown_attribute, wrong_type).", []string{"what", "reason"}, nil)
	descQueue      = prometheus.NewDesc("memgate_ingest_queue_depth", "Episodes not done, by status, in every space.", []string{"status"}, nil)
	descQueries    = prometheus.NewDesc("memgate_neo4j_queries_total", "Neo4j queries run, by query file.", []string{"query"}, nil)
	descQueryTime  = prometheus.NewDesc("memgate_neo4j_query_seconds_total", "Time in Neo4j queries, by query file (divide by memgate_neo4j_queries_total for the mean latency).", []string{"query"}, nil)
)

// scraped collects, at each scrape, the values kept elsewhere.
type scraped struct{ o Observed }

func (s scraped) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descProcessed, descFailed, descRetried, descProcessing, descLLMCalls,
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
