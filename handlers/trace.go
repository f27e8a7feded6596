package handlers

import (
	"strconv"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracing makes every request a server span, named by its method and route pattern
// ("POST /v1/memories"), the child of the caller's span when the request carries a
// W3C traceparent. Everything the request does runs in its context: the use case, its
// queries, its model calls, the log lines. A span holds the method, the route pattern,
// the status and the request id: never the path (it holds ids), the query string or a
// body. Probes and metric scrapes are not traced.
func tracing(tp trace.TracerProvider) echo.MiddlewareFunc {
	untraced := map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true} // probes and scrapes, every few seconds
	tracer := tp.Tracer("github.com/memgate/memgate/handlers")
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if untraced[c.Path()] {
				return next(c)
			}
			ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
			route := c.Path()
			name := r.Method
			if route != "" {
				name += " " + route
			}
			ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", route)))
			defer span.End()
			c.SetRequest(r.WithContext(ctx))
			err := next(c)
			status := c.Response().Status
			if err != nil {
				status, _, _ = classify(err)
			}
			span.SetAttributes(attribute.Int("http.response.status_code", status), attribute.String("memgate.request_id", requestID(c)))
			if status >= 500 {
				span.SetAttributes(attribute.String("error.type", strconv.Itoa(status)))
				span.SetStatus(codes.Error, "")
			}
			return err
		}
	}
}
