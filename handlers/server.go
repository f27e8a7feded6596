// Package handlers serves memgate's HTTP API with echo: routes, middleware (request
// ids, logging, host authentication, limits) and the one error shape.
package handlers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/service"
)

// Checker reports whether a dependency is ready to serve; the error's message says
// why not.
type Checker interface {
	Ready(ctx context.Context) error
}

// Deps is what the HTTP layer needs from the rest of the service.
type Deps struct {
	Log            *slog.Logger
	Keys           *access.Keyring
	Ready          Checker
	Consistency    graph.Consistency // nil: no consistency tokens
	Service        *service.Service
	BodyLimit      string        // e.g. "2M"
	HandlerTimeout time.Duration // every request's context deadline
	Version        string
	Metrics        *Metrics // nil: no /metrics
	// MetricsKeySHA256 (hex), when set, is the SHA-256 of the key /metrics asks for;
	// MetricsApart leaves /metrics off this handler (it has a listener of its own,
	// MetricsServer), the requests still counted.
	MetricsKeySHA256 string
	MetricsApart     bool
	RateLimit        float64 // requests per second per host key; 0: no limit
	RateBurst        int
	// Tracer makes a span of every request and MCP tool call (trace.go); nil:
	// tracing is off.
	Tracer trace.TracerProvider
}

// New returns the HTTP handler with every route and middleware.
func New(d Deps) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(d.Log)

	if d.Tracer != nil {
		e.Use(tracing(d.Tracer))
	}
	e.Use(requestIDMiddleware)
	e.Use(middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogRoutePath: true, LogStatus: true, LogLatency: true, LogError: true,
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level := slog.LevelInfo
			switch {
			case v.Status == http.StatusServiceUnavailable:
				level = slog.LevelWarn // a dependency is down; the cause is logged where it is known
			case v.Status >= 500:
				level = slog.LevelError
			}
			attrs := []slog.Attr{
				slog.String("request_id", requestID(c)), slog.String("method", v.Method),
				slog.String("route", v.RoutePath), slog.Int("status", v.Status),
				slog.Float64("latency_ms", float64(v.Latency.Microseconds())/1000),
			}
			if h, ok := c.Get(hostKey).(access.Host); ok {
				attrs = append(attrs, slog.String("host", h.Name))
			}
			d.Log.LogAttrs(c.Request().Context(), level, "request", attrs...)
			return nil
		},
	}))
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			d.Log.ErrorContext(c.Request().Context(), "panic", "request_id", requestID(c), "error", err.Error(), "stack", string(stack))
			return err
		},
	}))
	if d.Metrics != nil {
		e.Use(d.Metrics.observe)
		if !d.MetricsApart {
			e.GET("/metrics", d.Metrics.handler(d.MetricsKeySHA256))
		}
	}
	e.Use(middleware.BodyLimit(d.BodyLimit))
	e.Use(middleware.ContextTimeout(d.HandlerTimeout))

	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok", "version": d.Version})
	})
	e.GET("/readyz", readyz(d.Ready, d.Log))
	e.GET("/openapi.json", func(c echo.Context) error { return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPI) })

	limit := rateLimit(d.RateLimit, d.RateBurst)
	fresh := func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	if d.Consistency != nil {
		fresh = readYourWrites(d.Consistency, d.Log)
	}
	v1 := e.Group("/v1", authenticate(d.Keys), limit, fresh)
	v1.GET("/whoami", whoami(d.Keys))
	a := &api{svc: d.Service}
	a.routes(v1)
	methodNotAllowed(e)
	// MCP: the same host key and requester checks as /v1 before the MCP server sees
	// a request.
	// The server is stateless, so POST is its one method: echo answers GET (a stream)
	// and DELETE (a session's end) with 405 in the one error shape.
	mcpHandler := newMCP(d.Service, d.Version, d.Tracer)
	e.POST("/mcp", func(c echo.Context) error {
		// What the MCP handler would refuse in plain text is refused here in the one
		// error shape.
		if err := mcpHeaders(c.Request().Header); err != nil {
			return err
		}
		if err := refuseBatch(c.Request()); err != nil {
			return err
		}
		// The tools act for the requester resolved here, once per request (mcpCall),
		// and answer errors with the request id REST handlers have.
		c.Request().Header.Set(echo.HeaderXRequestID, requestID(c))
		r := c.Request()
		mcpHandler.ServeHTTP(c.Response(), r.WithContext(context.WithValue(r.Context(), mcpCallKey{}, callOf(c))))
		return nil
	}, authenticate(d.Keys), confineHost, limit, fresh, a.requester)
	return e
}

// MethodNotAllowedRoute names the routes methodNotAllowed adds.
const MethodNotAllowedRoute = "memgate:method-not-allowed"

// methodNotAllowed answers a known /v1 path asked with a method it does not serve
// with 405 and Allow. Without it the catch-all echo adds for the group's middleware
// would answer 404, as for a path that does not exist.
func methodNotAllowed(e *echo.Echo) {
	allowed := map[string][]string{}
	for _, r := range e.Routes() {
		if strings.HasPrefix(r.Path, "/v1/") && !strings.HasSuffix(r.Path, "/*") {
			allowed[r.Path] = append(allowed[r.Path], r.Method)
		}
	}
	for path, methods := range allowed {
		slices.Sort(methods)
		allow := strings.Join(methods, ", ")
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if !slices.Contains(methods, m) {
				e.Add(m, path, func(c echo.Context) error {
					c.Response().Header().Set(echo.HeaderAllow, allow)
					return echo.NewHTTPError(http.StatusMethodNotAllowed, c.Request().Method+" is not a method of this path; it takes "+allow)
				}).Name = MethodNotAllowedRoute
			}
		}
	}
}

// mcpHeaders checks what the streamable HTTP transport requires of a POST: a JSON
// body, and an answer as JSON or as an event stream.
func mcpHeaders(h http.Header) error {
	if mt, _, err := mime.ParseMediaType(h.Get(echo.HeaderContentType)); err != nil || mt != echo.MIMEApplicationJSON {
		return graph.Errorf(graph.EINVALID, "Content-Type must be application/json")
	}
	json, stream := false, false
	for _, value := range h.Values(echo.HeaderAccept) {
		for _, part := range strings.Split(value, ",") {
			mt, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "*/*":
				json, stream = true, true
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				stream = true
			}
		}
	}
	if !json || !stream {
		return graph.Errorf(graph.EINVALID, "Accept must list application/json and text/event-stream")
	}
	return nil
}

// refuseBatch refuses a JSON-RPC batch (a body that is an array): each request is
// one call against the rate limit, and the MCP transport of 2025-06-18 has no batches.
// The body, already bounded by the body limit, is put back for the MCP server.
func refuseBatch(r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err // the body limit's 413, or the client went away
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		return graph.Errorf(graph.EINVALID, "JSON-RPC batches are not accepted: send one message per request")
	}
	return nil
}

// readyz answers 200 when the store is reachable and migrated, else 503 with the reason.
func readyz(ready Checker, log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
		defer cancel()
		if err := ready.Ready(ctx); err != nil {
			log.WarnContext(ctx, "not ready", "request_id", requestID(c), "error", err.Error())
			return err
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	}
}

// WhoAmI tells a host how memgate sees it.
type WhoAmI struct {
	Host    access.Host `json:"host"`
	DevMode bool        `json:"dev_mode"`
}

func whoami(keys *access.Keyring) echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.JSON(http.StatusOK, WhoAmI{Host: hostOf(c), DevMode: keys.DevMode()})
	}
}

const (
	hostKey      = "memgate.host"
	requestIDKey = "memgate.request_id"
)

// authenticateHeader resolves the host key or JWT of "Authorization: Bearer <key>".
func authenticateHeader(ctx context.Context, keys *access.Keyring, h http.Header) (access.Host, error) {
	if len(h.Values(echo.HeaderAuthorization)) > 1 {
		return access.Host{}, graph.Errorf(graph.EINVALID, "Authorization must be given once")
	}
	bearer := ""
	if scheme, token, ok := strings.Cut(h.Get(echo.HeaderAuthorization), " "); ok && strings.EqualFold(scheme, "Bearer") {
		bearer = strings.TrimSpace(token)
	}
	return keys.Authenticate(ctx, bearer)
}

// authenticate resolves the host of every request (authenticateHeader).
func authenticate(keys *access.Keyring) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			host, err := authenticateHeader(c.Request().Context(), keys, c.Request().Header)
			if err != nil {
				return err
			}
			c.Set(hostKey, host)
			return next(c)
		}
	}
}

// confineHost makes the request's host confined whatever its key says: MCP tools
// act for the requester a key names, never as a trusted host.
func confineHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		host := hostOf(c)
		host.Trusted = false
		c.Set(hostKey, host)
		return next(c)
	}
}

func hostOf(c echo.Context) access.Host {
	h, _ := c.Get(hostKey).(access.Host)
	return h
}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// requestIDMiddleware keeps a caller's X-Request-Id when it is well formed (so it can
// be traced across services) and makes one otherwise; it is echoed in the response.
func requestIDMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !requestIDPattern.MatchString(id) {
			var b [12]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		c.Set(requestIDKey, id)
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

func requestID(c echo.Context) string {
	id, _ := c.Get(requestIDKey).(string)
	return id
}

// rateLimit lets each host key send perSecond requests a second on average and burst
// at once; above that it answers 429 rate_limited with Retry-After. A key's bucket is
// forgotten after ten idle minutes. perSecond 0 lets everything through.
func rateLimit(perSecond float64, burst int) echo.MiddlewareFunc {
	if perSecond <= 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	retryAfter := strconv.Itoa(int(math.Ceil(1 / perSecond)))
	return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Store: middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
			Rate: rate.Limit(perSecond), Burst: burst, ExpiresIn: 10 * time.Minute}),
		IdentifierExtractor: func(c echo.Context) (string, error) { return hostOf(c).Name, nil },
		DenyHandler: func(c echo.Context, _ string, _ error) error {
			c.Response().Header().Set("Retry-After", retryAfter)
			return graph.Errorf(graph.ERATELIMITED, "this host key sent more than %g requests a second; retry after %s s", perSecond, retryAfter)
		},
	})
}
