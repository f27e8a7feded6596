package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memgate/memgate/client"
)

// ontologyCorpus is eval/ontology.json: a deployment's ontology (the ingest keys of
// memgate's configuration, as written in its file) and conversations labelled with
// the typed entities, attribute values and typed edges they state.
type ontologyCorpus struct {
	Ingest        json.RawMessage        `json:"ingest"`
	Conversations []ontologyConversation `json:"conversations"`
}

type ontologyConversation struct {
	ID       string `json:"id"`
	Episodes []struct {
		ReferenceTime time.Time `json:"reference_time"`
		Messages      []struct {
			Role    string `json:"role"`
			Name    string `json:"name,omitempty"`
			Content string `json:"content"`
		} `json:"messages"`
	} `json:"episodes"`
	Entities []typedEntity `json:"entities"`
	Edges    []typedEdge   `json:"edges"`
}

// typedEntity is a labelled entity, or one memgate stored (GET /v1/entities).
type typedEntity struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Attributes map[string]any `json:"attributes"`
}

// typedEdge is a labelled edge, or a fact memgate stored (GET /v1/facts), its ends
// by name.
type typedEdge struct {
	Source     string         `json:"source"`
	Relation   string         `json:"relation"`
	Target     string         `json:"target"`
	Attributes map[string]any `json:"attributes"`
}

// ontologyScore counts one extractor's results over the ontology conversations.
type ontologyScore struct {
	name                            string
	conversations, episodes, failed int
	attrStored, attrRight, attrWant int // entity attributes: stored, of them right; labelled
	attrFound                       int // labelled entity attributes stored
	typedRight, typedWant           int // labelled entities stored with the labelled type
	edgeStored, edgeRight, edgeWant int // facts of a declared edge type: stored, of them right; labelled
	edgeFound                       int
	edgeAttrStored, edgeAttrRight   int // edge attributes
	edgeAttrWant, edgeAttrFound     int
	seconds                         float64
}

// add scores one conversation's stored entities and facts against its labels.
// An entity is a labelled one by labelOf, words compared without a plural s. An
// attribute is right when its entity, name and value are the label's (values as
// valueKey leaves them); a fact of a declared edge type is right when its ends and
// relation are a labelled edge's, and its attributes are scored as an entity's.
func (s *ontologyScore) add(conv ontologyConversation, edgeTypes map[string]bool, entities []typedEntity, facts []typedEdge) {
	var names []string
	for _, e := range conv.Entities {
		names = append(names, e.Name)
	}
	label := func(name string) string { return ontologyLabel(name, names) }
	want := map[string]bool{}
	for _, e := range conv.Entities {
		for k, v := range e.Attributes {
			want[attrKey(e.Name, k, v)] = true
		}
	}
	s.attrWant += len(want)
	typed := map[string]bool{}
	found := map[string]bool{}
	for _, e := range entities {
		l := label(e.Name)
		for _, w := range conv.Entities {
			if w.Name == l && w.Type == e.Type {
				typed[l] = true
			}
		}
		for k, v := range e.Attributes {
			s.attrStored++
			if key := attrKey(l, k, v); l != "" && want[key] {
				s.attrRight++
				found[key] = true
			}
		}
	}
	s.attrFound += len(found)
	s.typedWant += len(conv.Entities)
	s.typedRight += len(typed)

	wantEdge, wantEdgeAttr := map[string]bool{}, map[string]bool{}
	for _, e := range conv.Edges {
		wantEdge[edgeKey(e.Source, e.Relation, e.Target)] = true
		for k, v := range e.Attributes {
			wantEdgeAttr[attrKey(edgeKey(e.Source, e.Relation, e.Target), k, v)] = true
		}
	}
	s.edgeWant += len(wantEdge)
	s.edgeAttrWant += len(wantEdgeAttr)
	foundEdge, foundEdgeAttr := map[string]bool{}, map[string]bool{}
	for _, f := range facts {
		if !edgeTypes[f.Relation] {
			continue
		}
		s.edgeStored++
		key := edgeKey(label(f.Source), f.Relation, label(f.Target))
		if wantEdge[key] {
			s.edgeRight++
			foundEdge[key] = true
		}
		for k, v := range f.Attributes {
			s.edgeAttrStored++
			if a := attrKey(key, k, v); wantEdgeAttr[a] {
				s.edgeAttrRight++
				foundEdgeAttr[a] = true
			}
		}
	}
	s.edgeFound += len(foundEdge)
	s.edgeAttrFound += len(foundEdgeAttr)
}

// ontologyLabel is the labelled entity name refers to, as labelOf finds it, each
// word without a plural s (the Aero kettles for the Aero kettle).
func ontologyLabel(name string, labels []string) string {
	singular := func(s string) string {
		words := strings.Fields(normalize(s))
		for i, w := range words {
			if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
				words[i] = strings.TrimSuffix(w, "s")
			}
		}
		return strings.Join(words, " ")
	}
	var plain []string
	for _, l := range labels {
		plain = append(plain, singular(l))
	}
	found := labelOf(singular(name), plain)
	for i, p := range plain {
		if found != "" && p == found {
			return labels[i]
		}
	}
	return ""
}

func edgeKey(source, relation, target string) string {
	return source + " " + relation + " " + target
}

func attrKey(owner, name string, value any) string {
	return owner + "\x00" + name + "\x00" + valueKey(value)
}

// valueKey is an attribute value as compared: a number (or a text that is one) in
// its shortest decimal form, so 129.50 and "129.5" are equal; a text as normalize
// leaves it (case, punctuation and spacing ignored: "X200-EU" equals "x200 eu");
// a boolean as true or false.
func valueKey(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return normalize(v)
	default:
		return fmt.Sprint(v)
	}
}

// evaluateOntology runs the ontology conversations through one memgate configured
// with their ontology, and scores what GET /v1/entities and GET /v1/facts show.
func evaluateOntology(x extractor, binary, neo4jURI string, c ontologyCorpus) (ontologyScore, error) {
	s := ontologyScore{name: x.name}
	var ingest struct {
		EdgeTypes []struct{ Name string } `json:"edge_types"`
	}
	if err := json.Unmarshal(c.Ingest, &ingest); err != nil {
		return s, err
	}
	edgeTypes := map[string]bool{}
	for _, t := range ingest.EdgeTypes {
		edgeTypes[t.Name] = true
	}
	// The configuration file: JSON is YAML.
	dir, err := os.MkdirTemp("", "memgate-eval-ontology")
	if err != nil {
		return s, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "memgate.yaml")
	cfg, err := json.Marshal(map[string]json.RawMessage{"ingest": c.Ingest})
	if err != nil {
		return s, err
	}
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		return s, err
	}
	env := map[string]string{"MEMGATE_SERVER_ADDR": "127.0.0.1:0", "MEMGATE_NEO4J_URI": neo4jURI,
		"MEMGATE_SERVER_RATE_LIMIT": "0", "MEMGATE_INGEST_WORKERS": "2",
		"MEMGATE_EMBEDDER_PROVIDER": "hashing", "MEMGATE_EMBEDDER_DIMENSIONS": fmt.Sprint(embedDimensions)}
	for k, v := range x.env {
		env[k] = v
	}
	run := fmt.Sprintf("onto%d", time.Now().Unix())
	env["MEMGATE_INGEST_SCOPE"] = "agent-" + run
	srv, err := serve(binary, env, "--config", file)
	if err != nil {
		return s, err
	}
	defer srv.stop()
	base := srv.base
	ctx := context.Background()
	start := time.Now()
	convs := c.Conversations
	if x.limit > 0 && x.limit < len(convs) {
		convs = convs[:x.limit]
	}
	s.conversations = len(convs)
	for _, conv := range convs {
		agent := run + "-" + strings.ToLower(conv.ID)
		api := client.New(base, "", "eval-user")
		if err := api.CreateAgent(ctx, agent); err != nil {
			return s, err
		}
		for _, ep := range conv.Episodes {
			at := ep.ReferenceTime
			a, err := api.Add(ctx, client.Memory{AgentID: agent, Messages: ep.Messages, ReferenceTime: &at}, "")
			if err != nil {
				return s, fmt.Errorf("%s: %w", conv.ID, err)
			}
			// One at a time: a later episode updates what an earlier one stated.
			status, err := waitDone(ctx, api, a.ID)
			if err != nil {
				return s, err
			}
			s.episodes++
			if status != "done" {
				s.failed++
			}
		}
		var entities struct{ Items []typedEntity }
		if err := getJSON(ctx, base, "/v1/entities?"+url.Values{"agent_id": {agent}, "limit": {"100"}}.Encode(), &entities); err != nil {
			return s, fmt.Errorf("%s: %w", conv.ID, err)
		}
		var facts struct {
			Items []struct {
				Relation       string
				Source, Target struct{ Name string }
				Attributes     map[string]any
			}
		}
		if err := getJSON(ctx, base, "/v1/facts?"+url.Values{"agent_id": {agent}, "limit": {"100"}}.Encode(), &facts); err != nil {
			return s, fmt.Errorf("%s: %w", conv.ID, err)
		}
		var edges []typedEdge
		for _, f := range facts.Items {
			edges = append(edges, typedEdge{Source: f.Source.Name, Relation: f.Relation, Target: f.Target.Name, Attributes: f.Attributes})
		}
		log.Printf("eval: ontology, %s: %s: entities %+v; facts %+v", x.name, conv.ID, entities.Items, edges)
		s.add(conv, edgeTypes, entities.Items, edges)
	}
	s.seconds = time.Since(start).Seconds()
	return s, nil
}

// getJSON reads one GET route of memgate as the eval's requester.
func getJSON(ctx context.Context, base, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Requester-Id", "eval-user")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return json.Unmarshal(body, out)
}

// runOntology runs the conversations at path with each extractor (the model's
// scenario-only run aside) and writes their table into out's ontology section.
func runOntology(runs []extractor, binary, neo4jURI, path, out string) error {
	var c ontologyCorpus
	raw, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(raw, &c)
	}
	if err != nil {
		return fmt.Errorf("eval: reading %s: %w", path, err)
	}
	var scores []ontologyScore
	for _, x := range runs {
		if x.scenarioOnly {
			continue
		}
		x.limit = 0
		s, err := evaluateOntology(x, binary, neo4jURI, c)
		if err != nil {
			return fmt.Errorf("eval: ontology, %s: %w", x.name, err)
		}
		scores = append(scores, s)
	}
	report := renderOntology(scores, path, strings.Join(append([]string{"go run ./eval"}, os.Args[1:]...), " "))
	fmt.Print(report)
	if out == "" {
		return nil
	}
	return writeSection(out, ontologyStart, ontologyEnd, report)
}

const ontologyStart, ontologyEnd = "<!-- ontology:start -->", "<!-- ontology:end -->"

// renderOntology is the markdown section of the ontology runs.
func renderOntology(scores []ontologyScore, path, command string) string {
	var b strings.Builder
	b.WriteString("## Declared ontology: types and attributes (make eval)\n\n")
	fmt.Fprintf(&b, "Written by `make eval` (%s) from the labelled conversations of `%s`, run through a\n",
		time.Now().UTC().Format("2006-01-02"), path)
	b.WriteString("memgate started with their ontology as its configuration file (`ingest.entity_types`\n")
	b.WriteString("Customer with `tier` and `city`, Product with `sku` and `price`; `ingest.edge_types` PURCHASED\n")
	b.WriteString("Customer → Product with `quantity`), episodes one at a time, read back through\n")
	fmt.Fprintf(&b, "`GET /v1/entities` and `GET /v1/facts`. Command:\n\n```\n%s\n```\n\n", command)
	b.WriteString("| extractor | conversations | episodes failed | attribute precision | attribute recall | entity type right | typed-edge precision | typed-edge recall | edge attribute precision | edge attribute recall | s / episode |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range scores {
		fmt.Fprintf(&b, "| %s | %d | %d of %d | %s (%d of %d) | %s (%d of %d) | %d of %d | %s (%d of %d) | %s (%d of %d) | %s (%d of %d) | %s (%d of %d) | %.1f |\n",
			s.name, s.conversations, s.failed, s.episodes,
			ratio(s.attrRight, s.attrStored), s.attrRight, s.attrStored, ratio(s.attrFound, s.attrWant), s.attrFound, s.attrWant,
			s.typedRight, s.typedWant,
			ratio(s.edgeRight, s.edgeStored), s.edgeRight, s.edgeStored, ratio(s.edgeFound, s.edgeWant), s.edgeFound, s.edgeWant,
			ratio(s.edgeAttrRight, s.edgeAttrStored), s.edgeAttrRight, s.edgeAttrStored,
			ratio(s.edgeAttrFound, s.edgeAttrWant), s.edgeAttrFound, s.edgeAttrWant,
			s.seconds/float64(max(s.episodes, 1)))
	}
	b.WriteString("\nAn entity is a labelled one when its name is, or shares its words with exactly one (each word\n")
	b.WriteString("compared without a plural s: \"Aero kettles\" is the Aero kettle). An attribute is right when its\n")
	b.WriteString("entity, its name and its value are a label's; values are compared as numbers when both read as\n")
	b.WriteString("one (129.50 is 129.5), else as text without case, punctuation or spacing (\"X200-EU\" is \"x200 eu\").\n")
	b.WriteString("Precision is over every attribute stored, on any entity; recall over the labelled ones, the\n")
	b.WriteString("value the last episode states (Marco Bianchi's tier moves from silver to gold). Entity type right:\n")
	b.WriteString("labelled entities stored with the labelled type. A typed edge is a fact of a declared edge type\n")
	b.WriteString("(PURCHASED); right when its two ends are a labelled edge's; its attributes are scored as an\n")
	b.WriteString("entity's. The heuristic extractor gives no attributes and knows neither declared type: it is the\n")
	b.WriteString("floor. The model is the local one of the table above, with `llm.rules` on (the default).\n")
	return b.String()
}
