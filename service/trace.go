package service

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/memgate/memgate/graph"
)

// Every use case is a span ("service.Add"), a child of the request's; its queries and
// model calls are its children. A span holds the request id and the host key's name,
// and on failure graph's error code: never an id of a requester or agent (an erasure
// could not reach a trace store), nor a memory's text.

// span starts use case name's span for c. end ends it, with err (nil: the use case
// succeeded). With tracing off it does nothing at all.
func (s *Service) span(ctx context.Context, name string, c Call) (context.Context, func(err error)) {
	if s.Tracer == nil {
		return ctx, noEnd
	}
	ctx, span := s.Tracer.Tracer("github.com/memgate/memgate/service").Start(ctx, "service."+name)
	if !span.IsRecording() {
		return ctx, noEnd
	}
	span.SetAttributes(attribute.String("memgate.request_id", c.RequestID))
	if c.P.Host.Name != "" {
		span.SetAttributes(attribute.String("memgate.host", c.P.Host.Name))
	}
	return ctx, func(err error) {
		if err != nil {
			code := graph.ErrorCode(err)
			span.SetAttributes(attribute.String("error.type", code))
			span.SetStatus(codes.Error, code)
		}
		span.End()
	}
}

func noEnd(error) {}

// traceParent is the W3C traceparent of ctx's span, "" when there is none: what a
// memory queued for extraction keeps, so its ingestion links to this request.
func traceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier.Get("traceparent")
}
