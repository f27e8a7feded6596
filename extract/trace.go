package extract

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/memgate/memgate/graph"
)

// Tracing of the pipeline and the model calls (docs/operations.md#tracing).
//
// Every attempt of a call to the model provider is a client span, "chat MODEL" or
// "embeddings MODEL", holding the model, the task (extraction, summary, ...), the
// tokens the server reported and why the answer ended: never a prompt, an answer, a
// text embedded or the provider's error text (which may quote the prompt). The call
// carries the span's W3C traceparent to the provider.
//
// The ingestion of a memory is a span of its own trace ("ingest episode"), linked to
// the span of the request that queued it (its TraceParent): the request has long been
// answered when a worker, maybe of another replica, takes the memory, perhaps more
// than once, so the ingestion is not the request's child (a trace that grows for
// hours after its root ended, and whose attempts a collector's tail sampling would
// decide without); a link lets each be found from the other. Its phases (extract,
// resolve, save) and their model calls and queries are its children.

func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer("github.com/memgate/memgate/extract")
}

// startCall starts the span of one attempt of a model call (what: chat or embeddings).
func (o *OpenAI) startCall(ctx context.Context, what string, attempt int) (context.Context, trace.Span) {
	ctx, span := o.tracer.Start(ctx, what+" "+o.opts.Model, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(attribute.String("gen_ai.operation.name", what), attribute.String("gen_ai.provider.name", "openai"),
			attribute.String("gen_ai.request.model", o.opts.Model), attribute.Int("memgate.llm.attempt", attempt+1))
	}
	return ctx, span
}

// endCall ends a model call's span with its error's kind (classifyLLMError's).
func endCall(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		kind, _ := classifyLLMError(err)
		span.SetAttributes(attribute.String("error.type", kind))
		span.SetStatus(codes.Error, kind)
	}
	span.End()
}

// traceparentTo adds the W3C traceparent of the request's span to the model call.
func traceparentTo(r *http.Request) {
	propagation.TraceContext{}.Inject(r.Context(), propagation.HeaderCarrier(r.Header))
}

// startIngest starts the span of one attempt at ingesting ep: a new trace, linked to
// the request that queued it.
func (r *Runner) startIngest(ctx context.Context, ep *graph.Episode) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindConsumer)}
	if ep.TraceParent != "" {
		queued := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": ep.TraceParent})
		if sc := trace.SpanContextFromContext(queued); sc.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc,
				Attributes: []attribute.KeyValue{attribute.String("memgate.link", "queued_by")}}))
		}
	}
	ctx, span := r.tracer.Start(ctx, "ingest episode", opts...)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("memgate.episode.id", ep.UUID), attribute.Int("memgate.ingest.attempt", ep.Attempts))
	}
	return ctx, span
}

// endIngest ends an ingestion's span with its outcome: done, retry, failed, returned
// (shutting down) or lease_lost; and for a failure, the kind last_error names.
func endIngest(span trace.Span, outcome, reason string) {
	if span.IsRecording() {
		span.SetAttributes(attribute.String("memgate.ingest.outcome", outcome))
		if reason != "" {
			kind, _, _ := strings.Cut(reason, ":")
			span.SetAttributes(attribute.String("error.type", kind))
			span.SetStatus(codes.Error, kind)
		}
	}
	span.End()
}

// phase starts the span of one phase of an ingestion (extract, resolve, save).
func (r *Runner) phase(ctx context.Context, name string) (context.Context, func(error)) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, func(error) {}
	}
	ctx, span := r.tracer.Start(ctx, "ingest."+name)
	return ctx, func(err error) {
		if err != nil {
			span.SetStatus(codes.Error, "")
		}
		span.End()
	}
}
