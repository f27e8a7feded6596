package neo4jstore

import (
	"context"
	"errors"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/batch"
)

// Every named query is a span, named by its query file (episode_create), when it runs
// within a trace: a request's, an ingestion's. A query of a group commit runs in the
// group's context, which is no caller's (graph/batch): its span is a child of the first
// call's span and links to the others'. Queries outside any trace (the claimer's polls,
// lease renewals, the expiry sweeper, migrations) make no span: they would be a root
// trace each, every poll. A span holds the query's name, the database and how many
// rows came back, never a parameter.

// startQuery starts the span of the named query run in ctx, or returns a nil span
// when ctx is in no trace (and always while tracing is off).
func (db *DB) startQuery(ctx context.Context, name string) (context.Context, trace.Span) {
	var links []trace.Link
	if !trace.SpanContextFromContext(ctx).IsValid() {
		for _, c := range batch.Callers(ctx) {
			if sc := trace.SpanContextFromContext(c); sc.IsValid() {
				links = append(links, trace.Link{SpanContext: sc})
			}
		}
		if len(links) == 0 {
			return ctx, nil
		}
		ctx = trace.ContextWithSpanContext(ctx, links[0].SpanContext)
		links = links[1:]
	}
	return db.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithLinks(links...),
		trace.WithAttributes(db.spanAttrs...))
}

// endQuery ends a query's span (nil: none) with its rows, or its error's kind: the
// Neo4j status code or graph's error code, never the driver's text (a constraint's
// message quotes the value).
func endQuery(span trace.Span, rows int, err error) {
	if span == nil {
		return
	}
	if err != nil {
		kind := string(graph.ErrorCode(err))
		var ne *neo4j.Neo4jError
		if errors.As(err, &ne) {
			kind = ne.Code
		}
		span.SetAttributes(attribute.String("error.type", kind))
		span.SetStatus(codes.Error, kind)
	} else {
		span.SetAttributes(attribute.Int("db.response.returned_rows", rows))
	}
	span.End()
}
