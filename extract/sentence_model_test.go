package extract_test

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestSentenceModel: the embedder make run and the Docker image default to, the local
// sentence model (scripts/embedder-local, which make test starts: MG_TEST_EMBEDDER_URL),
// through memgate's OpenAI embedder: 384-dimension unit vectors, a question nearer the
// memory that answers it in other words than one that shares its words, the same
// vector for the same text, and the tokens it read counted.
func TestSentenceModel(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local embedder")
	}
	url := os.Getenv("MG_TEST_EMBEDDER_URL")
	if url == "" {
		t.Fatal("MG_TEST_EMBEDDER_URL names no embedder: run make test (it starts one), or scripts/embedder-local start and set it to the URL it prints")
	}
	// The client keeps its connection to the model server, which outlives the test.
	t.Cleanup(http.DefaultTransport.(*http.Transport).CloseIdleConnections)
	metrics := &extract.Metrics{}
	emb := extract.NewOpenAI(extract.OpenAIOptions{BaseURL: url, APIKey: "local", Model: "e5-small-v2", Dimensions: 384,
		QueryPrefix: "query: ", DocumentPrefix: "passage: ",
		Timeout: 30 * time.Second, MaxConcurrency: 2, MaxRetries: 1, Metrics: metrics, Log: neo4jtest.Logger(t)}, nil)
	ctx := context.Background()
	question := "Where does Dana work these days?"
	q, err := emb.EmbedQuery(ctx, question)
	if err != nil {
		t.Fatal(err)
	}
	again, err := emb.EmbedQuery(ctx, question)
	if err != nil {
		t.Fatal(err)
	}
	v, err := emb.Embed(ctx, []string{"Dana is a nurse at the city hospital.", "These days the work where I live is done by robots."})
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 384 || len(v) != 2 || len(v[0]) != 384 {
		t.Fatalf("vectors of %d and %d×%d dimensions, want 384", len(q), len(v), len(v[0]))
	}
	if n := graph.Cosine(q, q); n < 0.999 || n > 1.001 {
		t.Errorf("a vector's cosine with itself is %.4f", n)
	}
	answer, words := graph.Cosine(q, v[0]), graph.Cosine(q, v[1])
	if answer <= words {
		t.Errorf("the question's cosine to its answer in other words %.3f, to a text of its words %.3f: want the answer nearer", answer, words)
	}
	if graph.Cosine(q, again) < 0.9999 {
		t.Error("the same text embedded twice differs")
	}
	if metrics.EmbeddingTokens.Load() == 0 {
		t.Error("the tokens the model read are not counted")
	}
}
