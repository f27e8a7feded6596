package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestTracing_OnlyWhenConfigured: tracing is on only when the OTEL_* environment asks
// for an exporter, over the protocol it names; what memgate cannot export to stops
// the start, naming the variable.
func TestTracing_OnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	cases := []struct {
		env      map[string]string
		on       bool
		protocol string
		err      string
	}{
		{env: nil},
		{env: map[string]string{"OTEL_SERVICE_NAME": "memgate-a"}}, // a name alone exports nothing
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, on: true, protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, on: true, protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true, protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, on: true, protocol: "grpc"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, on: true, protocol: "grpc"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_TRACES_EXPORTER": "none"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_SDK_DISABLED": "true"}},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: "OTEL_TRACES_EXPORTER=zipkin"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp,console"}, err: "OTEL_TRACES_EXPORTER=otlp,console"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			err: "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"},
	}
	for _, c := range cases {
		env := func(k string) string { return c.env[k] }
		protocol, on, err := tracingWanted(env)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: error %v, want one naming %s", c.env, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.env, err)
		case on != c.on || protocol != c.protocol:
			t.Errorf("%v: on %v over %q, want %v over %q", c.env, on, protocol, c.on, c.protocol)
		}
		tp, err := newTracerProvider(context.Background(), env, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if (tp != nil) != c.on || (err != nil) != (c.err != "") {
			t.Errorf("%v: newTracerProvider = %v, %v; want a provider %v", c.env, tp, err, c.on)
		}
		if tp != nil {
			if err := tp.Shutdown(context.Background()); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestTracing_LogsCarryTraceIDs: a line logged with a context in a span carries its
// trace_id and span_id, also through With; one without a span carries neither.
func TestTracing_LogsCarryTraceIDs(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(traceLog{slog.NewJSONHandler(&buf, nil)}).With("service", "memgate")
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
	log.InfoContext(ctx, "in a span")
	log.InfoContext(context.Background(), "outside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var in, out map[string]any
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &in) != nil || json.Unmarshal([]byte(lines[1]), &out) != nil {
		t.Fatalf("log:\n%s", buf.String())
	}
	if in["trace_id"] != tid.String() || in["span_id"] != sid.String() || in["service"] != "memgate" {
		t.Errorf("the line in a span: %v", in)
	}
	if _, ok := out["trace_id"]; ok {
		t.Errorf("the line outside any span: %v", out)
	}
}
