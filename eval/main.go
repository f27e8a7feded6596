// Command eval measures extraction quality: it runs the labelled conversations of
// eval/corpus.json through a real memgate (the binary, over HTTP, on a real Neo4j)
// once per extractor, reads what landed in each agent's space from Neo4j, and scores
// it against the labels: entity and fact precision and recall, ended facts marked as
// ended, junk entities, the answer to each question among search's top five facts and
// in the context the agent would be given for it (POST /v1/agents/{id}/context, 500 tokens),
// whether each labelled fact held on the days asked as search's as_of says, facts that
// end before they begin, chat calls and seconds per episode. make eval runs it with the
// offline heuristic extractor and with a local model (scripts/llm-local) behind the
// OpenAI path, and writes the table into BENCHMARKS.md.
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/client"
)

type corpus struct {
	Conversations []conversation `json:"conversations"`
}

type conversation struct {
	ID       string `json:"id"`
	Topic    string `json:"topic"`
	Episodes []struct {
		ReferenceTime time.Time `json:"reference_time"`
		Messages      []struct {
			Role    string `json:"role"`
			Name    string `json:"name,omitempty"`
			Content string `json:"content"`
		} `json:"messages"`
	} `json:"episodes"`
	Entities  []string       `json:"entities"`
	Facts     []expectedFact `json:"facts"`
	Questions []struct {
		Question string `json:"question"`
		Answer   string `json:"answer"`
	} `json:"questions"`
	AsOf []asOfQuestion `json:"as_of"`
}

type expectedFact struct {
	Source    string `json:"source"`
	Relation  string `json:"relation"`
	Target    string `json:"target"`
	Ends      bool   `json:"ends"`
	ValidFrom string `json:"valid_from"` // when it began: a year (2020) or a month (2025-06); "" when not said
	ValidTo   string `json:"valid_to"`   // when an ended fact ended, the same way; "" when not said
	// Corrected: a later message corrects or takes it back ("not X but Y", "actually",
	// "scratch that"), so it must be stored ended.
	Corrected bool `json:"corrected"`
}

// extractor is one memgate configuration under evaluation.
type extractor struct {
	name         string
	env          map[string]string
	limit        int  // conversations; 0: all
	scenarioOnly bool // run on the scenario alone, not the corpus
}

func main() {
	corpusPath := flag.String("corpus", "eval/corpus.json", "the labelled conversations")
	binary := flag.String("memgate", ".data/memgate", "the memgate binary")
	neo4jURI := flag.String("neo4j", "bolt://127.0.0.1:7687", "the Neo4j memgate and the scoring use")
	llmURL := flag.String("llm", "", "an OpenAI-compatible base URL (scripts/llm-local); empty: the heuristic extractor only")
	llmModel := flag.String("llm-model", "local", "the model name at -llm")
	limit := flag.Int("limit", 0, "conversations to run (0: all)")
	llmLimit := flag.Int("llm-limit", 0, "conversations to run with the model at -llm (0: as -limit); it takes half a minute an episode on two cores")
	scenarioPath := flag.String("scenario", "", "one labelled conversation checked fact by fact with each extractor (eval/scenario.json); empty: none")
	out := flag.String("out", "BENCHMARKS.md", "the file whose eval section is rewritten; empty: print only")
	graphitiN := flag.Int("graphiti", 0, "the first conversations to run through graphiti-core's add_episode with the model at -llm (as -llm-limit's); 0: none")
	graphitiConstrained := flag.Int("graphiti-constrained", 0, "the first conversations to run through graphiti-core's add_episode with the model's output constrained to the schema, as memgate's is; 0: none")
	ontologyPath := flag.String("ontology", "", "conversations with a declared ontology (eval/ontology.json), run with each extractor and scored by attribute; empty: none")
	ontologyOnly := flag.Bool("ontology-only", false, "run the -ontology conversations alone, leaving the other sections of -out as they are")
	locomoDir := flag.String("locomo", "", "a folder of LoCoMo conversations (../shared/datasets/locomo), run through memgate and the baselines; empty: none")
	locomoOnly := flag.Bool("locomo-only", false, "run the -locomo conversations alone, leaving the other sections of -out as they are")
	locomoLimit := flag.Int("locomo-limit", 0, "LoCoMo conversations to run (0: all)")
	embedderURL := flag.String("embedder", "", "an OpenAI-compatible embeddings base URL with a sentence model (scripts/embedder-local): memgate's embedder for a second LoCoMo run, and the dense baseline; empty: hashing only")
	embedderModel := flag.String("embedder-model", "e5-small-v2", "the model at -embedder")
	queryPrefix := flag.String("embedder-query-prefix", "query: ", "what -embedder-model wants before a search query (memgate's embedder.query_prefix)")
	docPrefix := flag.String("embedder-document-prefix", "passage: ", "what -embedder-model wants before a stored text (embedder.document_prefix)")
	embedderDims := flag.Int("embedder-dimensions", 384, "the dimensions of -embedder's vectors")
	answers := flag.Int("locomo-answers", 100, "LoCoMo questions the model at -llm answers from memgate's and BM25's blocks (scored by token F1), and the judge too when EVAL_JUDGE_BASE_URL names one (EVAL_JUDGE_MODEL, default gpt-4o-mini; EVAL_JUDGE_API_KEY): across the categories; 0: none")
	flag.Parse()

	if *locomoDir != "" {
		o := locomoOptions{binary: *binary, neo4jURI: *neo4jURI, dir: *locomoDir, limit: *locomoLimit, embedderURL: *embedderURL,
			model: *embedderModel, queryPrefix: *queryPrefix, docPrefix: *docPrefix, dims: *embedderDims, answers: *answers, out: *out}
		if *llmURL != "" && *answers > 0 {
			o.answerer = newChatModel("the local model", *llmURL, *llmModel, "local")
		}
		if u := os.Getenv("EVAL_JUDGE_BASE_URL"); u != "" && *answers > 0 {
			model := cmp.Or(os.Getenv("EVAL_JUDGE_MODEL"), "gpt-4o-mini")
			o.judge = newChatModel(model, u, model, os.Getenv("EVAL_JUDGE_API_KEY"))
		}
		if err := runLocomo(o); err != nil {
			log.Fatal(err)
		}
		if *locomoOnly {
			return
		}
	}

	c := readCorpus(*corpusPath)
	if *limit > 0 && *limit < len(c.Conversations) {
		c.Conversations = c.Conversations[:*limit]
	}
	// Both systems reach the model through one proxy that counts their chat calls.
	var llm *llmProxy
	if *llmURL != "" {
		var err error
		if llm, err = startLLMProxy(*llmURL); err != nil {
			log.Fatal(err)
		}
		defer llm.Close()
	} else if *graphitiN > 0 || *graphitiConstrained > 0 {
		log.Fatal("eval: -graphiti and -graphiti-constrained need -llm")
	}
	runs := []extractor{{name: "heuristic", env: map[string]string{"MEMGATE_LLM_PROVIDER": "heuristic"}}}
	if *llmURL != "" {
		model := map[string]string{
			"MEMGATE_LLM_PROVIDER": "openai", "MEMGATE_LLM_BASE_URL": llm.url, "MEMGATE_LLM_API_KEY": "local",
			"MEMGATE_LLM_MODEL": *llmModel, "MEMGATE_LLM_TIMEOUT": "600s", "MEMGATE_LLM_MAX_CONCURRENCY": "1",
			"MEMGATE_LLM_MAX_RETRIES": "2", "MEMGATE_INGEST_LEASE": "15m",
			// An extraction answer takes 300-600 tokens; a small model that repeats itself
			// costs 70 s per 1,000 tokens on two cores before max_tokens stops it.
			"MEMGATE_LLM_MAX_TOKENS": fmt.Sprint(llmMaxTokens)}
		runs = append(runs, extractor{name: "openai path + rules, " + *llmModel + " model at `" + *llmURL + "`", limit: *llmLimit, env: model})
		// The model alone (llm.rules off), for the conversation checked fact by fact.
		alone := maps.Clone(model)
		alone["MEMGATE_LLM_RULES"] = "false"
		runs = append(runs, extractor{name: "openai path alone, " + *llmModel + " model", env: alone, scenarioOnly: true})
	}
	driver, err := neo4j.NewDriverWithContext(*neo4jURI, neo4j.NoAuth())
	if err != nil {
		log.Fatal(err)
	}
	defer driver.Close(context.Background())

	if *ontologyPath != "" {
		if err := runOntology(runs, *binary, *neo4jURI, *ontologyPath, *out); err != nil {
			log.Fatal(err)
		}
	}
	if *ontologyOnly {
		return
	}
	var results, checked []score
	for _, x := range runs {
		if !x.scenarioOnly {
			s, err := evaluate(x, *binary, *neo4jURI, driver, llm, c)
			if err != nil {
				log.Fatalf("eval: %s: %v", x.name, err)
			}
			results = append(results, s)
		}
		if *scenarioPath != "" {
			x.limit = 0
			s, err := evaluate(x, *binary, *neo4jURI, driver, llm, readCorpus(*scenarioPath))
			if err != nil {
				log.Fatalf("eval: scenario, %s: %v", x.name, err)
			}
			checked = append(checked, s)
		}
	}
	for _, g := range []struct {
		n            int
		schemaBeside bool
	}{{*graphitiN, false}, {*graphitiConstrained, true}} {
		if g.n == 0 {
			continue
		}
		s, err := evaluateGraphiti(llm, *llmModel, *neo4jURI, driver, c.Conversations[:min(g.n, len(c.Conversations))], g.schemaBeside)
		if err != nil {
			log.Fatalf("eval: graphiti-core: %v", err)
		}
		results = append(results, s)
	}
	if len(checked) > 0 {
		report := renderScenario(checked, *scenarioPath)
		fmt.Print(report)
		if *out != "" {
			if err := writeSection(*out, scenarioStart, scenarioEnd, report); err != nil {
				log.Fatal(err)
			}
		}
	}
	kept, err := keptRows(*out, results)
	if err != nil {
		log.Fatal(err)
	}
	report := render(results, kept, strings.Join(append([]string{"go run ./eval"}, os.Args[1:]...), " "))
	fmt.Print(report)
	if *out != "" {
		if err := writeSection(*out, sectionStart, sectionEnd, report); err != nil {
			log.Fatal(err)
		}
	}
}

func readCorpus(path string) corpus {
	var c corpus
	raw, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(raw, &c)
	}
	if err != nil {
		log.Fatalf("eval: reading %s: %v", path, err)
	}
	return c
}

// renderScenario is the markdown section of the one conversation checked fact by fact:
// a row per labelled fact, a column per extractor.
func renderScenario(checked []score, path string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## One conversation, fact by fact (make eval)\n\n")
	fmt.Fprintf(&b, "Written by `make eval` (%s): the conversation of `%s` (%d episodes, one message each), through\n",
		time.Now().UTC().Format("2006-01-02"), path, checked[0].episodes)
	b.WriteString("each extractor. A labelled fact is right (✓) when a fact between its two entities is stored, ended or not\n")
	b.WriteString("as labelled, from the labelled start when there is one; the cell shows the stored relation and dates.\n\n")
	b.WriteString("| labelled fact | label |")
	for _, s := range checked {
		b.WriteString(" " + s.name + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(checked)) + "\n")
	for i, o := range checked[0].outcomes {
		label := "current"
		if o.want.Ends {
			label = "ended"
		}
		if o.want.ValidFrom != "" {
			label += ", from " + o.want.ValidFrom
		}
		if o.want.ValidTo != "" {
			label += ", to " + o.want.ValidTo
		}
		fmt.Fprintf(&b, "| %s %s %s | %s |", o.want.Source, o.want.Relation, o.want.Target, label)
		for _, s := range checked {
			b.WriteString(" " + cell(s.outcomes[i]) + " |")
		}
		b.WriteString("\n")
	}
	rows := []struct {
		name string
		cell func(s score) string
	}{
		{"episodes done", func(s score) string { return fmt.Sprintf("%d of %d", s.episodes-s.failed, s.episodes) }},
		{"facts stored (of them between labelled ends)", func(s score) string { return fmt.Sprintf("%d (%d)", s.factsFound, s.factsRight) }},
		{"chat calls", func(s score) string { return fmt.Sprintf("%.0f", s.chatCalls) }},
		{"answers cut off at llm.max_tokens", func(s score) string { return fmt.Sprintf("%.0f", s.cutOff) }},
		{"seconds per episode", func(s score) string { return fmt.Sprintf("%.1f", s.seconds/float64(max(s.episodes, 1))) }},
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | |", r.name)
		for _, s := range checked {
			b.WriteString(" " + r.cell(s) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// cell is one labelled fact's outcome: ✓ or ✗, the relation stored, its dates.
func cell(o outcome) string {
	if !o.found {
		return "✗ missing"
	}
	mark := "✗"
	if o.right() {
		mark = "✓"
	}
	state := "current"
	if o.ended {
		state = "ended"
	}
	if o.validAt != nil {
		state += ", from " + o.validAt.UTC().Format(time.DateOnly)
	}
	if o.invalidAt != nil {
		state += " to " + o.invalidAt.UTC().Format(time.DateOnly)
	}
	return fmt.Sprintf("%s %s, %s", mark, o.relation, state)
}

// score is one extractor's totals over the corpus.
type score struct {
	name                              string
	conversations                     int
	entitiesFound, entitiesRight      int // extracted, of them matching a labelled entity
	entitiesLabelled, entitiesMatched int
	factsFound, factsRight            int
	factsLabelled, factsMatched       int
	endsRight, endsJudged             int // matched labelled facts whose ended state is right
	corrections, stored, corrected    int // labelled corrected facts, of them stored, of those ended
	datesRight, datesJudged           int // matched labelled facts with a start whose valid_at falls in it
	asOfRight, asOfAsked              int // as_of questions the stored facts answer as labelled
	inverted                          int // stored facts that end before they begin
	junk                              []string
	questions, answered               int
	contextAsked, inContext           int       // questions asked for a context, of them answered in its text
	outcomes                          []outcome // per labelled fact, in corpus order
	episodes, failed                  int
	chatCalls                         float64
	cutOff                            float64 // answers cut off at llm.max_tokens: runaways
	invented                          float64 // entities, facts and summary sentences dropped as ungrounded or unstated
	seconds                           float64
	episodeTimes                      []time.Duration // how long each episode took to process
}

// outcome is what was stored for one labelled fact.
type outcome struct {
	want      expectedFact
	found     bool
	relation  string
	ended     bool
	validAt   *time.Time
	invalidAt *time.Time
}

// startRight reports whether the fact's valid_at falls in the labelled start.
func (o outcome) startRight() bool {
	return o.validAt != nil && strings.HasPrefix(o.validAt.UTC().Format(time.DateOnly), o.want.ValidFrom)
}

// right reports whether the labelled fact is stored, ended or not as labelled, from
// its labelled start when it has one.
func (o outcome) right() bool {
	return o.found && o.ended == o.want.Ends && (o.want.ValidFrom == "" || o.startRight())
}

// evaluate runs the corpus through one memgate and scores what it stored; its chat
// calls are counted at llm (nil: none).
func evaluate(x extractor, binary, neo4jURI string, driver neo4j.DriverWithContext, llm *llmProxy, c corpus) (score, error) {
	s := score{name: x.name}
	env := map[string]string{"MEMGATE_SERVER_ADDR": "127.0.0.1:0", "MEMGATE_NEO4J_URI": neo4jURI,
		"MEMGATE_SERVER_RATE_LIMIT": "0", "MEMGATE_INGEST_WORKERS": "2",
		"MEMGATE_EMBEDDER_PROVIDER": "hashing", "MEMGATE_EMBEDDER_DIMENSIONS": fmt.Sprint(embedDimensions)}
	for k, v := range x.env {
		env[k] = v
	}
	run := fmt.Sprintf("eval%d", time.Now().Unix())
	env["MEMGATE_INGEST_SCOPE"] = "agent-" + run // this run's spaces only, whatever else the database holds
	srv, err := serve(binary, env)
	if err != nil {
		return s, err
	}
	defer srv.stop()
	base := srv.base
	ctx := context.Background()
	calls0 := llm.chatCalls()
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
		var ids []string
		for _, ep := range conv.Episodes {
			at := ep.ReferenceTime
			a, err := api.Add(ctx, client.Memory{AgentID: agent, Messages: ep.Messages, ReferenceTime: &at}, "")
			if err != nil {
				return s, fmt.Errorf("%s: %w", conv.ID, err)
			}
			ids = append(ids, a.ID)
		}
		for _, id := range ids {
			status, err := waitDone(ctx, api, id)
			if err != nil {
				return s, err
			}
			s.episodes++
			if status != "done" {
				s.failed++
			}
		}
		if err := s.add(ctx, driver, "agent-"+agent+"-private", memgateAnswers(api, agent), memgateContext(api, agent), conv); err != nil {
			return s, fmt.Errorf("%s: %w", conv.ID, err)
		}
		log.Printf("eval: %s: %s done (%d episodes so far, %.0f s)", x.name, conv.ID, s.episodes, time.Since(start).Seconds())
	}
	s.seconds = time.Since(start).Seconds()
	s.episodeTimes = srv.episodeTimes()
	s.chatCalls = llm.chatCalls() - calls0
	if s.cutOff, err = metric(base, "memgate_llm_errors_total", `kind="cut_off"`); err != nil {
		return s, err
	}
	for _, reason := range []string{"ungrounded", "unstated"} {
		n, err := metric(base, "memgate_extraction_dropped_total", `reason="`+reason+`"`)
		if err != nil {
			return s, err
		}
		s.invented += n
	}
	return s, nil
}

// add scores one conversation's space; its questions are answered by answer, and
// by inContext too unless it is nil.
func (s *score) add(ctx context.Context, driver neo4j.DriverWithContext, group string, answer answerer, inContext contexter, conv conversation) error {
	res, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (n:Entity {group_id: $g}) RETURN n.name AS name`,
		map[string]any{"g": group}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase("neo4j"))
	if err != nil {
		return err
	}
	var found []string
	for _, r := range res.Records {
		name, _ := r.Get("name")
		found = append(found, fmt.Sprint(name))
	}
	s.entitiesFound += len(found)
	matched := map[string]bool{}
	for _, f := range found {
		if l := labelOf(f, conv.Entities); l != "" {
			s.entitiesRight++
			matched[l] = true
		} else if isJunk(f) {
			s.junk = append(s.junk, f)
		}
	}
	s.entitiesLabelled += len(conv.Entities)
	s.entitiesMatched += len(matched)

	res, err = neo4j.ExecuteQuery(ctx, driver, `MATCH (a:Entity)-[r:RELATES_TO {group_id: $g}]->(b:Entity)
		RETURN a.name AS source, r.name AS relation, b.name AS target, r.invalid_at IS NOT NULL OR r.expired_at IS NOT NULL AS ended,
		       r.valid_at AS valid_at, r.invalid_at AS invalid_at`,
		map[string]any{"g": group}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase("neo4j"))
	if err != nil {
		return err
	}
	type stored struct {
		a, b, relation string // a, b: the labelled entities its ends are, or ""
		ended          bool
		validAt        *time.Time
		invalidAt      *time.Time
	}
	var facts []stored
	for _, r := range res.Records {
		src, _ := r.Get("source")
		tgt, _ := r.Get("target")
		rel, _ := r.Get("relation")
		ended, _ := r.Get("ended")
		f := stored{a: labelOf(fmt.Sprint(src), conv.Entities), b: labelOf(fmt.Sprint(tgt), conv.Entities),
			relation: fmt.Sprint(rel), ended: ended == true}
		if v, ok := r.AsMap()["valid_at"].(time.Time); ok {
			f.validAt = &v
		}
		if v, ok := r.AsMap()["invalid_at"].(time.Time); ok {
			f.invalidAt = &v
		}
		if f.validAt != nil && f.invalidAt != nil && f.invalidAt.Before(*f.validAt) {
			s.inverted++
		}
		facts = append(facts, f)
	}
	ends := func(f stored, want expectedFact) bool {
		return f.a != "" && f.b != "" && (want.Source == f.a && want.Target == f.b || want.Source == f.b && want.Target == f.a)
	}
	s.factsFound += len(facts)
	s.factsLabelled += len(conv.Facts)
	for _, f := range facts {
		if slices.ContainsFunc(conv.Facts, func(want expectedFact) bool { return ends(f, want) }) {
			s.factsRight++
		}
	}
	// Each labelled fact is judged on the stored fact between its ends with its
	// relation, else on the first between them.
	for _, want := range conv.Facts {
		o := outcome{want: want}
		for _, f := range facts {
			if ends(f, want) && (!o.found || f.relation == want.Relation) {
				o.found, o.relation, o.ended, o.validAt, o.invalidAt = true, f.relation, f.ended, f.validAt, f.invalidAt
			}
		}
		s.outcomes = append(s.outcomes, o)
		if want.Corrected {
			s.corrections++
			if o.found {
				s.stored++
			}
			if o.found && o.ended {
				s.corrected++
			}
		}
		if !o.found {
			continue
		}
		s.factsMatched++
		s.endsJudged++
		if o.ended == want.Ends {
			s.endsRight++
		}
		if want.ValidFrom != "" {
			s.datesJudged++
			if o.startRight() {
				s.datesRight++
			}
		}
	}
	s.asOfAsked += len(conv.AsOf)
	s.asOfRight += asOfRight(conv.AsOf, conv.Facts, s.outcomes[len(s.outcomes)-len(conv.Facts):])

	for _, q := range conv.Questions {
		s.questions++
		facts, err := answer(ctx, q.Question)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(facts, func(f string) bool { return answers(f, q.Answer) }) {
			s.answered++
		}
		if inContext == nil {
			continue
		}
		text, err := inContext(ctx, q.Question)
		if err != nil {
			return err
		}
		s.contextAsked++
		if answers(text, q.Answer) {
			s.inContext++
		}
	}
	return nil
}

// answers reports whether text holds the labelled answer, words compared as normalize
// leaves them: the rule of both answer columns.
func answers(text, answer string) bool {
	return strings.Contains(normalize(text), normalize(answer))
}

// answerer answers a question with at most five facts, each its text and the names of
// its two entities: memgate's search or Graphiti's, so both are scored alike.
type answerer func(ctx context.Context, question string) ([]string, error)

// memgateAnswers answers through memgate's search, as the agent asks it.
func memgateAnswers(api *client.Client, agent string) answerer {
	return func(ctx context.Context, question string) ([]string, error) {
		var found struct {
			Facts []struct {
				Fact           string
				Source, Target struct{ Name string }
			} `json:"facts"`
		}
		if err := api.Search(ctx, map[string]any{"agent_id": agent, "query": question, "limit": 5,
			"include": []string{"facts"}}, &found); err != nil {
			return nil, err
		}
		var out []string
		for _, f := range found.Facts {
			out = append(out, f.Fact+" "+f.Source.Name+" "+f.Target.Name)
		}
		return out, nil
	}
}

// contexter answers a question with the text of a context block, as an agent would
// put it in its prompt.
type contexter func(ctx context.Context, question string) (string, error)

// contextTokens is the budget of the context the eval asks for.
const contextTokens = 500

// memgateContext answers through memgate's context endpoint, as the agent asks it.
func memgateContext(api *client.Client, agent string) contexter {
	return func(ctx context.Context, question string) (string, error) {
		tc, err := api.Context(ctx, agent, client.ContextRequest{Query: question, MaxTokens: contextTokens})
		return tc.Context, err
	}
}

var nonWord = regexp.MustCompile(`[^\p{L}\p{N}]+`)

func normalize(s string) string {
	return strings.TrimSpace(nonWord.ReplaceAllString(strings.ToLower(s), " "))
}

// labelOf is the labelled entity an extracted name refers to: the same name, or one
// whose words contain all of the other's (a first name for the full name) when only
// one label does.
func labelOf(name string, labels []string) string {
	n := normalize(name)
	if n == "" {
		return ""
	}
	var partial []string
	for _, l := range labels {
		ln := normalize(l)
		if ln == n {
			return l
		}
		if subset(strings.Fields(n), strings.Fields(ln)) || subset(strings.Fields(ln), strings.Fields(n)) {
			partial = append(partial, l)
		}
	}
	if len(partial) == 1 {
		return partial[0]
	}
	return ""
}

func subset(a, b []string) bool {
	for _, w := range a {
		found := false
		for _, v := range b {
			found = found || v == w
		}
		if !found {
			return false
		}
	}
	return true
}

// junkWords are what no annotator would call an entity: greetings, pronouns, the
// conversation's roles, discourse markers.
var junkWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`hi hello hey thanks thank you cheers bye i i'm im me my mine we us our you your he she
		they them it this that user assistant speaker system big news correction update oh ok okay yes no sorry lol btw
		anyway actually well great good nice wow hmm so just also today yesterday tomorrow`) {
		junkWords[w] = true
	}
}

func isJunk(name string) bool {
	words := strings.Fields(normalize(name))
	if len(words) == 0 {
		return true
	}
	for _, w := range words {
		if !junkWords[w] {
			return false
		}
	}
	return true
}

// memgate is a running memgate: its base URL, and how long each episode it processed
// took, as its log says.
type memgate struct {
	base string
	stop func()
	mu   sync.Mutex
	took []time.Duration // in the order the episodes were done
}

// episodeTimes is how long each episode processed so far took.
func (m *memgate) episodeTimes() []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.took)
}

// serve starts memgate and returns it once it is ready.
func serve(binary string, env map[string]string, args ...string) (*memgate, error) {
	cmd := exec.Command(binary, append([]string{"serve"}, args...)...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	m := &memgate{stop: func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}}
	addr := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(pipe)
		scanner.Buffer(make([]byte, 64<<10), 1<<20)
		for scanner.Scan() {
			var line struct {
				Msg, Addr string
				MS        float64
			}
			switch {
			case json.Unmarshal(scanner.Bytes(), &line) != nil:
			case line.Msg == "memgate listening":
				addr <- line.Addr
			case line.Msg == "episode processed":
				m.mu.Lock()
				m.took = append(m.took, time.Duration(line.MS*float64(time.Millisecond)))
				m.mu.Unlock()
			}
			if strings.Contains(scanner.Text(), `"level":"ERROR"`) {
				log.Printf("memgate: %s", scanner.Text())
			}
		}
	}()
	select {
	case a := <-addr:
		m.base = "http://" + a
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if resp, err := http.Get(m.base + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return m, nil
				}
			}
		}
		m.stop()
		return nil, fmt.Errorf("memgate at %s not ready within 2 minutes", m.base)
	case <-time.After(2 * time.Minute):
		m.stop()
		return nil, fmt.Errorf("memgate did not listen within 2 minutes")
	}
}

// waitDone polls a memory until its ingestion ends, and returns its status.
func waitDone(ctx context.Context, api *client.Client, id string) (string, error) {
	for deadline := time.Now().Add(time.Hour); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		m, err := api.Get(ctx, id)
		if err != nil {
			return "", err
		}
		if m.Status == "done" || m.Status == "failed" {
			return m.Status, nil
		}
	}
	return "", fmt.Errorf("memory %s still not done after an hour", id)
}

// metric sums the /metrics series of name whose labels include label: the chat
// completions memgate made, or the answers cut off at llm.max_tokens.
func metric(base, name, label string) (float64, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, name+"{") && strings.Contains(line, label) {
			var v float64
			fields := strings.Fields(line)
			if _, err := fmt.Sscan(fields[len(fields)-1], &v); err == nil {
				total += v
			}
		}
	}
	return total, nil
}

// spread is the median and p95 of ds in seconds.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f / %.2f", percentile(ds, 0.5).Seconds(), percentile(ds, 0.95).Seconds())
}

func ratio(a, b int) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// keptRows are the table rows of the eval section in path for extractors this run did
// not run (make eval with EVAL_LLM=0 keeps the local model's), each marked with the
// date of its run and with – in the columns added since.
func keptRows(path string, ran []score) ([]string, error) {
	old, err := os.ReadFile(path)
	if err != nil || path == "" {
		return nil, nil
	}
	text := string(old)
	i, j := strings.Index(text, sectionStart), strings.Index(text, sectionEnd)
	if i < 0 || j < i {
		return nil, nil
	}
	section := text[i:j]
	date := ""
	if m := regexp.MustCompile(`make eval\x60? \((\d{4}-\d{2}-\d{2})\)`).FindStringSubmatch(section); m != nil {
		date = m[1]
	}
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		name, _, _ := strings.Cut(cells[0], " (run of ")
		if !strings.HasPrefix(line, "| ") || name == "extractor" || slices.ContainsFunc(ran, func(s score) bool { return s.name == name }) {
			continue
		}
		if !strings.Contains(cells[0], " (run of ") && date != "" {
			cells[0] += " (run of " + date + ")"
		}
		for len(cells) < len(columns) {
			cells = append(cells, "–")
		}
		rows = append(rows, "| "+strings.Join(cells, " | ")+" |")
	}
	return rows, nil
}

// columns are the eval table's, in order; a column added later goes at the end, so
// kept rows of earlier runs stay aligned.
var columns = []string{"extractor", "conversations", "entity precision", "entity recall", "fact precision",
	"fact recall", "ended right", "junk entities", "answer in top 5", "episodes failed", "chat calls / episode",
	"s / episode", "start dates right", "as_of right", "inverted intervals", fmt.Sprintf("answer in context (%d tokens)", contextTokens), "invented, dropped",
	"corrections applied", "s / episode, median / p95"}

// render is the markdown section of the results, then the rows kept from earlier runs.
func render(results []score, kept []string, command string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Extraction quality (make eval)\n\n")
	fmt.Fprintf(&b, "Written by `make eval` (%s) from the labelled conversations of `eval/corpus.json`,\n",
		time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "each through a running memgate on a local Neo4j, scored against the labels. Command:\n\n```\n%s\n```\n\n", command)
	b.WriteString("| " + strings.Join(columns, " | ") + " |\n")
	b.WriteString(strings.Repeat("|---", len(columns)) + "|\n")
	for _, s := range results {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %d | %s | %d of %d | %.1f | %.1f | %d of %d | %d of %d | %d | %s | %.0f | %d of %d (%d) | %s |\n", s.name, s.conversations,
			ratio(s.entitiesRight, s.entitiesFound), ratio(s.entitiesMatched, s.entitiesLabelled),
			ratio(s.factsRight, s.factsFound), ratio(s.factsMatched, s.factsLabelled),
			ratio(s.endsRight, s.endsJudged), len(s.junk), ratio(s.answered, s.questions), s.failed, s.episodes,
			s.chatCalls/float64(max(s.episodes, 1)), s.seconds/float64(max(s.episodes, 1)), s.datesRight, s.datesJudged,
			s.asOfRight, s.asOfAsked, s.inverted, ratio(s.inContext, s.contextAsked), s.invented,
			s.corrected, s.stored, s.corrections, spread(s.episodeTimes))
	}
	for _, row := range kept {
		b.WriteString(row + "\n")
	}
	b.WriteString("\nAn extracted entity is right when its name is a labelled one, or shares its words with exactly\n")
	b.WriteString("one (a first name for the full name); a fact is right when its two ends are a labelled fact's,\n")
	b.WriteString("whatever the relation's name; ended right: of the labelled facts found, those marked ended (or\n")
	b.WriteString("not) as the label says; junk: extracted entities made only of greetings, pronouns, roles and\n")
	b.WriteString("discourse markers; answer in top 5: the question's labelled answer is in one of the five facts\n")
	b.WriteString("search returns for it; start dates right: of the labelled facts found that say when they began\n")
	b.WriteString("(a year or a month), those whose valid_at falls in it; as_of right: of the questions whether a\n")
	b.WriteString("labelled fact held on a day (one inside its labelled interval, one before a stated start, one\n")
	b.WriteString("after a known end), those the stored fact judged above answers as labelled, by search's as_of rule\n")
	b.WriteString("(from valid_at, when set, to invalid_at, exclusive, when set); a question whose fact is not stored\n")
	b.WriteString("counts as wrong, even one whose answer is no; inverted intervals: stored facts whose invalid_at\n")
	fmt.Fprintf(&b, "is before their valid_at, which must be 0; answer in context (%d tokens): the same questions\n", contextTokens)
	fmt.Fprintf(&b, "asked to POST /v1/agents/{id}/context with max_tokens %d, the answer counted as in top 5 but\n", contextTokens)
	b.WriteString("in the block's whole text (facts, entity summaries and the memories themselves); – for\n")
	b.WriteString("Graphiti, which has no such call; invented, dropped: the entities, facts and summary sentences\n")
	b.WriteString("extraction dropped because the memory did not name or state them (memgate_extraction_dropped_total,\n")
	b.WriteString("reasons ungrounded and unstated), none stored; corrections applied: of the labelled facts a later\n")
	b.WriteString("message corrects or takes back that were stored, those stored ended (in brackets: how many are\n")
	b.WriteString("labelled); s / episode, median / p95: the time each\n")
	b.WriteString("episode took from its claim to its save, as memgate's log reports it. Embeddings are the offline hashing embedder in both\n")
	b.WriteString("runs. The corpus was written for this eval without reading either extractor's code.\n")
	if slices.ContainsFunc(results, func(s score) bool { return strings.HasPrefix(s.name, "openai path") }) ||
		slices.ContainsFunc(kept, func(row string) bool { return strings.HasPrefix(row, "| openai path") }) {
		b.WriteString(localModel)
	}
	if slices.ContainsFunc(results, func(s score) bool { return strings.HasPrefix(s.name, "graphiti-core") }) ||
		slices.ContainsFunc(kept, func(row string) bool { return strings.HasPrefix(row, "| graphiti-core") }) {
		b.WriteString(graphitiRows)
	}
	for _, s := range results {
		if len(s.junk) > 0 {
			fmt.Fprintf(&b, "\nJunk entities of %s: %s.\n", s.name, strings.Join(s.junk, ", "))
		}
	}
	return b.String()
}

// localModel says what the openai rows ran on.
const localModel = `The local model is Qwen2.5-Coder-1.5B-Instruct Q4_K_M behind llama-cpp-python 0.3.36
(` + "`scripts/llm-local`" + `, 2 cores, about 15 tokens a second), reached with ` + "`llm.structured_output: auto`" + `
(its server refuses json_schema; every later call went as json_object with the schema). "openai path + rules"
is the default, ` + "`llm.rules: true`" + `: the offline extractor's rules check the model's answer (a fact they find
that the model missed is added; their explicit dates and endings stand). A row "openai path, local model"
of an earlier run is the model alone, before the rules existed. The model varies from run to run: two runs
of the same 8 conversations gave fact precision 0.65 and 0.83, recall 0.27 and 0.42.
`

// graphitiRows says how the graphiti-core rows ran.
const graphitiRows = `The graphiti-core rows are its own ` + "`add_episode`" + ` (` + "`scripts/graphiti_eval.py`" + `) on the first conversations
of the model run, each in a group of its own, with the same model server, the same hashing embeddings (served to it
over HTTP) and at most the same tokens an answer; their facts and entities are read from Neo4j and scored by the same
scorer, their answers through Graphiti's own ` + "`search`" + `. "As shipped" is OpenAIGenericClient in json_object mode, which
writes the schema into the prompt only; "output constrained to the schema" also puts it in response_format, where
llama-cpp-python constrains decoding to it, as memgate's json_object calls do. An episode whose add_episode raised
counts as failed. Chat calls of every row are counted at a proxy in front of the model server; seconds for Graphiti
are add_episode's alone, for memgate from the first write to the last episode done, scoring included.
`

const (
	sectionStart, sectionEnd   = "<!-- eval:start -->", "<!-- eval:end -->"
	scenarioStart, scenarioEnd = "<!-- scenario:start -->", "<!-- scenario:end -->"
)

// writeSection puts report between the markers start and end of path, or at its end.
func writeSection(path, sectionStart, sectionEnd, report string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	text := string(old)
	section := sectionStart + "\n" + report + sectionEnd + "\n"
	if i, j := strings.Index(text, sectionStart), strings.Index(text, sectionEnd); i >= 0 && j > i {
		text = text[:i] + section + strings.TrimPrefix(text[j+len(sectionEnd):], "\n")
	} else {
		text = strings.TrimRight(text, "\n") + "\n\n" + section
	}
	return os.WriteFile(path, []byte(text), 0o644)
}
