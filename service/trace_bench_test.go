package service

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkUseCaseSpan is what a use case's span costs: off (no tracer: the API's
// no-op), and on with an SDK provider that records every span.
func BenchmarkUseCaseSpan(b *testing.B) {
	c := Call{RequestID: "bench"}
	run := func(b *testing.B, s *Service) {
		b.ReportAllocs()
		for b.Loop() {
			_, end := s.span(context.Background(), "Add", c)
			end(nil)
		}
	}
	b.Run("off", func(b *testing.B) { run(b, &Service{}) })
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
		run(b, &Service{Tracer: tp})
	})
}
