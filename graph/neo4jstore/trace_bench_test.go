package neo4jstore

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkQuerySpan is what a query's span costs: off (no tracer, no trace in the
// context: what every query pays with tracing off), and on, within a recorded span.
func BenchmarkQuerySpan(b *testing.B) {
	run := func(b *testing.B, db *DB, ctx context.Context) {
		b.ReportAllocs()
		for b.Loop() {
			_, span := db.startQuery(ctx, "episode_get")
			endQuery(span, 1, nil)
		}
	}
	b.Run("off", func(b *testing.B) {
		run(b, &DB{tracer: noop.NewTracerProvider().Tracer("")}, context.Background())
	})
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
		ctx, parent := tp.Tracer("").Start(context.Background(), "request")
		defer parent.End()
		run(b, &DB{tracer: tp.Tracer("")}, ctx)
	})
}
