package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is off unless the standard OTEL_* variables ask for an exporter: then
// memgate exports its spans by OTLP (docs/operations.md#tracing). Off, no SDK tracer
// provider exists and every package runs on the API's no-op tracer.

// tracingWanted reports whether the environment configures a trace exporter, and
// which OTLP protocol to use: OTEL_TRACES_EXPORTER=otlp, or (with it unset) an OTLP
// endpoint; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off. An
// exporter or protocol memgate does not have stops the start, naming it.
func tracingWanted(env func(string) string) (protocol string, on bool, err error) {
	if strings.EqualFold(strings.TrimSpace(env("OTEL_SDK_DISABLED")), "true") {
		return "", false, nil
	}
	switch exporters := strings.ToLower(strings.TrimSpace(env("OTEL_TRACES_EXPORTER"))); exporters {
	case "none":
		return "", false, nil
	case "":
		if env("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return "", false, nil
		}
	case "otlp":
	default:
		return "", false, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: memgate exports traces by otlp only (or none)", exporters)
	}
	protocol = strings.ToLower(strings.TrimSpace(env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")))
	if protocol == "" {
		protocol = strings.ToLower(strings.TrimSpace(env("OTEL_EXPORTER_OTLP_PROTOCOL")))
	}
	switch protocol {
	case "":
		protocol = "http/protobuf" // the specification's default
	case "http/protobuf", "grpc":
	default:
		return "", false, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: memgate's OTLP exporter speaks http/protobuf or grpc", protocol)
	}
	return protocol, true, nil
}

// newTracerProvider returns the SDK tracer provider the environment asks for, or nil
// when tracing is off. The exporter reads its endpoint, headers, timeout, compression
// and certificates from OTEL_EXPORTER_OTLP_*; the batch processor its queue from
// OTEL_BSP_*; the provider its sampler from OTEL_TRACES_SAMPLER (default: parent-based,
// always on); the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES over
// service.name memgate. The exporter connects lazily: an unreachable collector costs
// dropped spans and a logged warning, never the start.
func newTracerProvider(ctx context.Context, env func(string) string, log *slog.Logger) (*sdktrace.TracerProvider, error) {
	protocol, on, err := tracingWanted(env)
	if err != nil || !on {
		return nil, err
	}
	var exporter sdktrace.SpanExporter
	if protocol == "grpc" {
		exporter, err = otlptracegrpc.New(ctx)
	} else {
		exporter, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("memgate"), semconv.ServiceVersion(buildVersion())),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("the trace resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	// The SDK reports an export that failed (a collector away) through the one global
	// handler; it goes to the service log, not to the standard logger.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("opentelemetry", "error", err.Error())
	}))
	log.Info("tracing on", "protocol", protocol)
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res)), nil
}

// traceLog adds trace_id and span_id to every record logged with a context that holds
// a span: a log line can be found from its trace and back.
type traceLog struct{ slog.Handler }

func (h traceLog) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceLog{h.Handler.WithAttrs(attrs)}
}
func (h traceLog) WithGroup(name string) slog.Handler { return traceLog{h.Handler.WithGroup(name)} }
