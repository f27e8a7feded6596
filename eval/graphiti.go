package main

// Graphiti on the same model, the same corpus and the same scorer: graphiti-core's own
// add_episode and search (scripts/graphiti_eval.py) run on the conversations memgate's
// model run had, against the same model server, through the same counting proxy, with
// memgate's hashing embeddings served over HTTP; what it stored is scored by score.add.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/extract"
)

const (
	// llmMaxTokens is the most tokens a chat answer may take, in memgate's runs
	// (llm.max_tokens) and in Graphiti's.
	llmMaxTokens = 1024
	// embedDimensions is the hashing embedder's size, in memgate's runs
	// (embedder.dimensions) and behind the embeddings endpoint Graphiti calls.
	embedDimensions = 256
	// graphitiVenv runs a script with the python that has graphiti-core, installing it
	// on first use.
	graphitiVenv, graphitiScript = "scripts/graphiti-venv", "scripts/graphiti_eval.py"
)

// local is an HTTP server of the eval's own on 127.0.0.1, on a port it picks.
type local struct {
	addr string
	srv  *http.Server
}

func serveLocal(h http.Handler) (*local, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &local{addr: ln.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := l.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("eval: server on %s: %v", l.addr, err)
		}
	}()
	return l, nil
}

func (l *local) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.srv.Shutdown(ctx)
}

// llmProxy stands in front of the model server and counts the chat completions sent
// through it: memgate and Graphiti both reach the model through it, so their calls are
// counted alike, at the server, retries included.
type llmProxy struct {
	*local
	url   string // the base URL clients are given: the proxy's address, the server's path
	chats atomic.Int64
}

// startLLMProxy proxies to the OpenAI-compatible base URL target.
func startLLMProxy(target string) (*llmProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("-llm %q: %w", target, err)
	}
	server := &url.URL{Scheme: u.Scheme, Host: u.Host}
	forward := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(server) },
		// A streamed answer goes on chunk by chunk, as the server writes it.
		FlushInterval: -1,
	}
	p := &llmProxy{}
	p.local, err = serveLocal(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions") {
			p.chats.Add(1)
		}
		forward.ServeHTTP(w, r)
	}))
	if err != nil {
		return nil, err
	}
	p.url = "http://" + p.addr + strings.TrimRight(u.Path, "/")
	return p, nil
}

// chatCalls is the number of chat completions proxied so far; 0 without a proxy.
func (p *llmProxy) chatCalls() float64 {
	if p == nil {
		return 0
	}
	return float64(p.chats.Load())
}

// startEmbeddings serves OpenAI's POST /v1/embeddings computed by memgate's own
// hashing embedder, so that Graphiti embeds as memgate's runs do.
func startEmbeddings(h extract.Hashing) (*local, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model          string          `json:"model"`
			Input          json.RawMessage `json:"input"`
			EncodingFormat string          `json:"encoding_format"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var texts []string
		if json.Unmarshal(req.Input, &texts) != nil {
			var text string
			if err := json.Unmarshal(req.Input, &text); err != nil {
				http.Error(w, "input must be a string or a list of strings", http.StatusBadRequest)
				return
			}
			texts = []string{text}
		}
		vectors, err := h.Embed(r.Context(), texts)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		type item struct {
			Object    string `json:"object"`
			Index     int    `json:"index"`
			Embedding any    `json:"embedding"` // floats, or their little-endian float32 bytes in base64
		}
		data := make([]item, len(vectors))
		for i, v := range vectors {
			data[i] = item{Object: "embedding", Index: i, Embedding: v}
			if req.EncodingFormat == "base64" {
				raw := make([]byte, 0, 4*len(v))
				for _, x := range v {
					raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
				}
				data[i].Embedding = base64.StdEncoding.EncodeToString(raw)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data,
			"usage": map[string]int{"prompt_tokens": 0, "total_tokens": 0}})
	})
	return serveLocal(mux)
}

// graphitiInput is what scripts/graphiti_eval.py reads.
type graphitiInput struct {
	Neo4jURI string `json:"neo4j_uri"`
	LLM      struct {
		BaseURL      string `json:"base_url"`
		Model        string `json:"model"`
		MaxTokens    int    `json:"max_tokens"`
		SchemaBeside bool   `json:"schema_beside"`
	} `json:"llm"`
	Embedder struct {
		BaseURL    string `json:"base_url"`
		Model      string `json:"model"`
		Dimensions int    `json:"dimensions"`
	} `json:"embedder"`
	Conversations []graphitiConversation `json:"conversations"`
}

type graphitiConversation struct {
	GroupID   string   `json:"group_id"`
	Episodes  any      `json:"episodes"` // the corpus's, as they are
	Questions []string `json:"questions"`
}

// graphitiOutput is the line scripts/graphiti_eval.py prints.
type graphitiOutput struct {
	Version       string `json:"graphiti_core"`
	Conversations []struct {
		GroupID  string   `json:"group_id"`
		Episodes int      `json:"episodes"`
		Failed   int      `json:"failed"`
		Seconds  float64  `json:"seconds"` // add_episode of all its episodes
		Errors   []string `json:"errors"`
		Answers  [][]struct {
			Fact, Source, Target string
		} `json:"answers"` // per question, Graphiti's search results
	} `json:"conversations"`
}

// evaluateGraphiti runs convs through graphiti-core's add_episode, each in a group of
// its own, with the model behind llm, and scores each group as memgate's spaces are.
// The groups stay in the database, as memgate's runs' spaces do (make eval wipes it).
//
// With schemaBeside the model's output is constrained to each answer's schema as
// memgate's is (the schema in response_format, where llama-cpp-python reads it); without
// it Graphiti runs as it ships, the schema only in the prompt.
func evaluateGraphiti(llm *llmProxy, model, neo4jURI string, driver neo4j.DriverWithContext, convs []conversation, schemaBeside bool) (score, error) {
	var s score
	embed, err := startEmbeddings(extract.Hashing{Dimensions: embedDimensions})
	if err != nil {
		return s, err
	}
	defer embed.Close()
	in := graphitiInput{Neo4jURI: neo4jURI}
	in.LLM.BaseURL, in.LLM.Model, in.LLM.MaxTokens, in.LLM.SchemaBeside = llm.url, model, llmMaxTokens, schemaBeside
	in.Embedder.BaseURL, in.Embedder.Model, in.Embedder.Dimensions = "http://"+embed.addr+"/v1", "hashing", embedDimensions
	run := time.Now().Unix()
	for _, conv := range convs {
		gc := graphitiConversation{GroupID: fmt.Sprintf("graphiti-%d-%s", run, strings.ToLower(conv.ID)), Episodes: conv.Episodes}
		for _, q := range conv.Questions {
			gc.Questions = append(gc.Questions, q.Question)
		}
		in.Conversations = append(in.Conversations, gc)
	}
	file, err := os.CreateTemp("", "graphiti-eval-*.json")
	if err != nil {
		return s, err
	}
	defer os.Remove(file.Name())
	err = json.NewEncoder(file).Encode(in)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s, err
	}

	log.Printf("eval: graphiti-core add_episode on %d conversations", len(convs))
	calls0 := llm.chatCalls()
	var stdout bytes.Buffer
	cmd := exec.Command(graphitiVenv, graphitiScript, "--input", file.Name())
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return s, fmt.Errorf("%s: %w", graphitiScript, err)
	}
	s.chatCalls = llm.chatCalls() - calls0
	var out graphitiOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return s, fmt.Errorf("%s printed %q: %w", graphitiScript, stdout.String(), err)
	}
	if len(out.Conversations) != len(convs) {
		return s, fmt.Errorf("%s answered for %d conversations of %d", graphitiScript, len(out.Conversations), len(convs))
	}
	s.name = "graphiti-core " + out.Version + " add_episode, " + model + " model, as shipped"
	if schemaBeside {
		s.name = "graphiti-core " + out.Version + " add_episode, " + model + " model, output constrained to the schema"
	}
	s.conversations = len(convs)
	ctx := context.Background()
	for i, conv := range convs {
		got := out.Conversations[i]
		s.episodes += got.Episodes
		s.failed += got.Failed
		s.seconds += got.Seconds
		for _, e := range got.Errors {
			log.Printf("eval: graphiti: %s: %s", conv.ID, e)
		}
		if len(got.Answers) != len(conv.Questions) {
			return s, fmt.Errorf("%s: %s answered %d questions of %d", conv.ID, graphitiScript, len(got.Answers), len(conv.Questions))
		}
		answers := map[string][]string{}
		for j, q := range in.Conversations[i].Questions {
			for _, f := range got.Answers[j] {
				answers[q] = append(answers[q], f.Fact+" "+f.Source+" "+f.Target)
			}
		}
		answer := func(_ context.Context, question string) ([]string, error) { return answers[question], nil }
		if err := s.add(ctx, driver, got.GroupID, answer, nil, conv); err != nil {
			return s, fmt.Errorf("%s: %w", conv.ID, err)
		}
	}
	return s, nil
}
