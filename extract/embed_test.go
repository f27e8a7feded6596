package extract_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/extract/llmtest"
	"github.com/memgate/memgate/graph"
)

// TestEmbed_Prefixes: with embedder.query_prefix and document_prefix set, what is
// stored is embedded after the document prefix and a search query after the query
// prefix (e5's "passage: " and "query: "), and the vectors are those of the prefixed
// texts; with none set, texts go as they are.
func TestEmbed_Prefixes(t *testing.T) {
	t.Parallel()
	llm := llmtest.New()
	t.Cleanup(llm.Close)
	ctx := context.Background()
	opts := extract.OpenAIOptions{BaseURL: llm.BaseURL(), APIKey: "test", Model: "embedder", Timeout: 10 * time.Second,
		MaxConcurrency: 1, Dimensions: 64, Metrics: &extract.Metrics{}, QueryPrefix: "query: ", DocumentPrefix: "passage: "}
	e5 := extract.NewOpenAI(opts, nil)
	docs, err := e5.Embed(ctx, []string{"Caroline adopted a dog.", "Caroline"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := e5.EmbedQuery(ctx, "What did Caroline adopt?")
	if err != nil {
		t.Fatal(err)
	}
	opts.QueryPrefix, opts.DocumentPrefix = "", ""
	plain := extract.NewOpenAI(opts, nil)
	if _, err := plain.Embed(ctx, []string{"Caroline"}); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.EmbedQuery(ctx, "Caroline?"); err != nil {
		t.Fatal(err)
	}
	var sent [][]string
	for _, r := range llm.EmbeddingRequests() {
		sent = append(sent, r.Texts)
	}
	want := [][]string{{"passage: Caroline adopted a dog.", "passage: Caroline"}, {"query: What did Caroline adopt?"}, {"Caroline"}, {"Caroline?"}}
	if !slices.EqualFunc(sent, want, slices.Equal[[]string]) {
		t.Errorf("texts sent %q, want %q", sent, want)
	}
	if graph.Cosine(docs[0], llmtest.Vector("passage: Caroline adopted a dog.", 64)) < 0.9999 ||
		graph.Cosine(q, llmtest.Vector("query: What did Caroline adopt?", 64)) < 0.9999 {
		t.Error("the vectors are not those of the prefixed texts")
	}
}
