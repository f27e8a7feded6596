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
	emb := extract.NewOpenAI(extract.OpenAIOptions{BaseURL: url, APIKey: "local", Model: "all-MiniLM-L6-v2", Dimensions: 384,
		Timeout: 30 * time.Second, MaxConcurrency: 2, MaxRetries: 1, Metrics: metrics, Log: neo4jtest.Logger(t)}, nil)
	texts := []string{
		"Where does Dana work these days?",
		"Dana is a nurse at the city hospital.",
		"These days the work where I live is done by robots.",
		"Where does Dana work these days?",
	}
	v, err := emb.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != len(texts) || len(v[0]) != 384 {
		t.Fatalf("%d vectors of %d dimensions, want %d of 384", len(v), len(v[0]), len(texts))
	}
	if n := graph.Cosine(v[0], v[0]); n < 0.999 || n > 1.001 {
		t.Errorf("a vector's cosine with itself is %.4f", n)
	}
	answer, words := graph.Cosine(v[0], v[1]), graph.Cosine(v[0], v[2])
	if answer <= words {
		t.Errorf("the question's cosine to its answer in other words %.3f, to a text of its words %.3f: want the answer nearer", answer, words)
	}
	if graph.Cosine(v[0], v[3]) < 0.9999 {
		t.Error("the same text embedded twice differs")
	}
	if metrics.EmbeddingTokens.Load() == 0 {
		t.Error("the tokens the model read are not counted")
	}
}
