package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/service"
)

// LoCoMo (Maharana et al., ACL 2024): long conversations between two people, many
// dated sessions each, and questions with the turns that hold their evidence. The
// harness reads a folder of its conversation files (one JSON object each: speaker_a,
// speaker_b, session_N and session_N_date_time, qa), ingests each conversation into
// memgate through the public API (one agent per conversation, one memory per turn with
// its session's time and its speaker's name), asks every question of categories 1 to
// 4 through search and through the context endpoint, and scores what came back against
// the evidence turns and the gold answer, beside baselines over the same turns. It
// never reads the files' observation, summary or event fields.

// locomoCategories are the categories scored, by number.
var locomoCategories = []struct {
	n    int
	name string
}{{1, "multi-hop"}, {2, "temporal"}, {3, "open-domain"}, {4, "single-hop"}}

// locomoBudget is the context budget every block is asked for, in tokens.
const locomoBudget = 1000

// locomoK are the cut-offs of evidence recall.
var locomoK = []int{5, 10, 20}

type locomoConversation struct {
	ID       string
	Speakers [2]string
	Turns    []locomoTurn // in the conversation's order
	QA       []locomoQA   // categories 1 to 4
}

type locomoTurn struct {
	DiaID   string
	Speaker string
	Text    string // what was said, with a shared photo's caption
	At      time.Time
}

type locomoQA struct {
	Question string
	Answer   string
	Evidence []string // dia_ids that exist in the conversation
	Category int
}

// sessionKey matches a session's key, session_N.
var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// readLocomo reads every *.json file of dir as a LoCoMo conversation.
func readLocomo(dir string) ([]locomoConversation, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []locomoConversation
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		c, err := parseLocomo(strings.TrimSuffix(filepath.Base(p), ".json"), raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no LoCoMo conversation (*.json) in %s", dir)
	}
	return out, nil
}

// parseLocomo reads one conversation: its turns session by session, each at its
// session's time (a second apart, in order), and its questions of categories 1 to 4
// with the evidence that names turns of it.
func parseLocomo(id string, raw []byte) (locomoConversation, error) {
	var file map[string]json.RawMessage
	if err := json.Unmarshal(raw, &file); err != nil {
		return locomoConversation{}, err
	}
	c := locomoConversation{ID: id}
	_ = json.Unmarshal(file["speaker_a"], &c.Speakers[0])
	_ = json.Unmarshal(file["speaker_b"], &c.Speakers[1])
	var sessions []int
	for k := range file {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			var n int
			fmt.Sscan(m[1], &n)
			sessions = append(sessions, n)
		}
	}
	sort.Ints(sessions)
	exists := map[string]bool{}
	for _, n := range sessions {
		var when string
		_ = json.Unmarshal(file[fmt.Sprintf("session_%d_date_time", n)], &when)
		at, err := time.Parse("3:04 pm on 2 January, 2006", when)
		if err != nil {
			return c, fmt.Errorf("session %d's time %q: %w", n, when, err)
		}
		var turns []struct {
			Speaker     string `json:"speaker"`
			DiaID       string `json:"dia_id"`
			Text        string `json:"text"`
			BlipCaption string `json:"blip_caption"`
		}
		if err := json.Unmarshal(file[fmt.Sprintf("session_%d", n)], &turns); err != nil {
			return c, fmt.Errorf("session %d: %w", n, err)
		}
		for i, t := range turns {
			text := strings.TrimSpace(t.Text)
			if t.BlipCaption != "" {
				text += " [shares a photo: " + strings.TrimSpace(t.BlipCaption) + "]"
			}
			if text == "" {
				continue
			}
			c.Turns = append(c.Turns, locomoTurn{DiaID: t.DiaID, Speaker: t.Speaker, Text: text, At: at.Add(time.Duration(i) * time.Second)})
			exists[t.DiaID] = true
		}
	}
	var qa []struct {
		Question string   `json:"question"`
		Answer   any      `json:"answer"`
		Evidence []string `json:"evidence"`
		Category int      `json:"category"`
	}
	if err := json.Unmarshal(file["qa"], &qa); err != nil {
		return c, fmt.Errorf("qa: %w", err)
	}
	for _, q := range qa {
		if q.Category < 1 || q.Category > 4 || q.Answer == nil {
			continue
		}
		var evidence []string
		for _, e := range q.Evidence {
			for _, id := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || unicode.IsSpace(r) }) {
				if exists[id] && !slices.Contains(evidence, id) {
					evidence = append(evidence, id)
				}
			}
		}
		c.QA = append(c.QA, locomoQA{Question: q.Question, Answer: strings.TrimSpace(fmt.Sprint(q.Answer)), Evidence: evidence, Category: q.Category})
	}
	return c, nil
}

// line is how a turn reads in a baseline's block: its day, its speaker, what was said.
func (t locomoTurn) line() string {
	return "- " + t.At.Format("2 January 2006") + ", " + t.Speaker + ": " + t.Text
}

// words are the lower-cased runs of letters and digits of text.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// contentWords are words without the stop words (search's, graph.StopWord).
func contentWords(text string) []string {
	var out []string
	for _, w := range words(text) {
		if !graph.StopWord(w) {
			out = append(out, w)
		}
	}
	return out
}

// answerWordsIn is the share of the answer's content words that text holds (1 for an
// answer of none).
func answerWordsIn(answer, text string) float64 {
	want := contentWords(answer)
	if len(want) == 0 {
		return 1
	}
	have := map[string]bool{}
	for _, w := range words(text) {
		have[w] = true
	}
	n := 0
	for _, w := range want {
		if have[w] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// evidenceIn is the share of the evidence turns among got (1 when the question names
// none that exists: such questions are scored on their answer words alone).
func evidenceIn(evidence, got []string) float64 {
	if len(evidence) == 0 {
		return 1
	}
	n := 0
	for _, e := range evidence {
		if slices.Contains(got, e) {
			n++
		}
	}
	return float64(n) / float64(len(evidence))
}

// locomoTally sums one system's scores, per category and overall.
type locomoTally struct {
	name   string
	ranked bool // it ranks turns (recall@k applies)
	byCat  map[int]*locomoSums
	search []time.Duration
	block  []time.Duration
}

type locomoSums struct {
	n                         int
	recall                    [3]float64 // at locomoK
	inBlock, answerWords, tok float64
	f1                        float64 // token F1 of the answers from its blocks
	answered                  int
	judged, correct           int // by the judge
}

func newTally(name string, ranked bool) *locomoTally {
	t := &locomoTally{name: name, ranked: ranked, byCat: map[int]*locomoSums{}}
	for _, c := range locomoCategories {
		t.byCat[c.n] = &locomoSums{}
	}
	return t
}

// add scores one question: the system's ranked turns (nil for none), and its block
// (the turns it holds and its text, with its size in tokens).
func (t *locomoTally) add(q locomoQA, ranked []string, blockTurns []string, blockText string, tokens int) {
	s := t.byCat[q.Category]
	s.n++
	for i, k := range locomoK {
		s.recall[i] += evidenceIn(q.Evidence, ranked[:min(k, len(ranked))])
	}
	s.inBlock += evidenceIn(q.Evidence, blockTurns)
	s.answerWords += answerWordsIn(q.Answer, blockText)
	s.tok += float64(tokens)
}

// total is the sums over every category.
func (t *locomoTally) total() locomoSums {
	var out locomoSums
	for _, s := range t.byCat {
		out.n += s.n
		for i := range out.recall {
			out.recall[i] += s.recall[i]
		}
		out.inBlock += s.inBlock
		out.answerWords += s.answerWords
		out.tok += s.tok
		out.f1 += s.f1
		out.answered += s.answered
		out.judged += s.judged
		out.correct += s.correct
	}
	return out
}

// pack lays ranked turns out as a block within budget tokens, best first, skipping a
// line that does not fit what is left: the baselines' blocks.
func pack(turns []locomoTurn, order []int, tok *service.Tokenizer, budget int) (ids []string, text string, tokens int) {
	var lines []string
	used := 0
	for _, i := range order {
		cost := tok.Count(turns[i].line() + "\n")
		if used+cost > budget {
			continue
		}
		used += cost
		lines = append(lines, turns[i].line())
		ids = append(ids, turns[i].DiaID)
	}
	text = strings.Join(lines, "\n")
	return ids, text, tok.Count(text)
}

// recent is the newest turns that fit budget, as the conversation's last block.
func recent(turns []locomoTurn, tok *service.Tokenizer, budget int) (ids []string, text string, tokens int) {
	var lines []string
	used := 0
	for i := len(turns) - 1; i >= 0; i-- {
		cost := tok.Count(turns[i].line() + "\n")
		if used+cost > budget {
			break
		}
		used += cost
		lines = append([]string{turns[i].line()}, lines...)
		ids = append(ids, turns[i].DiaID)
	}
	text = strings.Join(lines, "\n")
	return ids, text, tok.Count(text)
}

// bm25 ranks the turns for a query by BM25 (k1 1.2, b 0.75) over their content words.
type bm25 struct {
	docs   [][]string
	df     map[string]int
	avglen float64
}

func newBM25(turns []locomoTurn) *bm25 {
	b := &bm25{df: map[string]int{}}
	total := 0
	for _, t := range turns {
		ws := contentWords(t.Speaker + " " + t.Text)
		b.docs = append(b.docs, ws)
		total += len(ws)
		seen := map[string]bool{}
		for _, w := range ws {
			if !seen[w] {
				seen[w] = true
				b.df[w]++
			}
		}
	}
	b.avglen = float64(total) / float64(max(1, len(turns)))
	return b
}

func (b *bm25) rank(query string) []int {
	q := contentWords(query)
	n := float64(len(b.docs))
	scores := make([]float64, len(b.docs))
	for i, d := range b.docs {
		tf := map[string]int{}
		for _, w := range d {
			tf[w]++
		}
		for _, w := range q {
			if f := float64(tf[w]); f > 0 {
				df := float64(b.df[w])
				idf := math.Log(1 + (n-df+0.5)/(df+0.5))
				scores[i] += idf * f * 2.2 / (f + 1.2*(0.25+0.75*float64(len(d))/b.avglen))
			}
		}
	}
	return order(scores)
}

// order is the indexes of scores, highest first, those of score 0 left out.
func order(scores []float64) []int {
	var idx []int
	for i, s := range scores {
		if s > 0 {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx
}

// fuse is the reciprocal rank fusion (k 60) of rankings.
func fuse(rankings ...[]int) []int {
	score := map[int]float64{}
	for _, r := range rankings {
		for pos, i := range r {
			score[i] += 1 / float64(60+pos+1)
		}
	}
	n := 0
	for i := range score {
		n = max(n, i+1)
	}
	scores := make([]float64, n)
	for i, s := range score {
		scores[i] = s
	}
	return order(scores)
}

// embedder calls an OpenAI-compatible /v1/embeddings, for the dense baseline.
// embedder is the dense baseline's: the sentence model at url, each text after the
// prefix of its kind, as memgate sends them (embedder.query_prefix, document_prefix).
type embedder struct{ url, model, queryPrefix, documentPrefix string }

func (e embedder) embed(ctx context.Context, prefix string, texts []string) ([][]float32, error) {
	var out [][]float32
	for start := 0; start < len(texts); start += 256 {
		batch := slices.Clone(texts[start:min(start+256, len(texts))])
		for i := range batch {
			batch[i] = prefix + batch[i]
		}
		body, _ := json.Marshal(map[string]any{"model": e.model, "input": batch})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(e.url, "/")+"/embeddings", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		var answer struct {
			Data []struct {
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&answer)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("embeddings: %d %v", resp.StatusCode, err)
		}
		for _, d := range answer.Data {
			out = append(out, d.Embedding)
		}
	}
	return out, nil
}

// locomoRun is one memgate configuration the harness measures.
type locomoRun struct {
	name string
	env  map[string]string
}

// locomoResult is what one run measured, with the baselines over the same turns.
type locomoResult struct {
	systems     []*locomoTally
	memories    int
	ingest      time.Duration
	conversions int
	asked       []locomoAsked
	answerer    *chatModel // the model whose answers from the blocks are scored by F1, nil for none
	judge       *chatModel // the model that answered and judged, nil for none
}

// evaluateLocomo ingests every conversation into a fresh memgate of run, asks every
// question, and scores memgate and the baselines (dense ones only with dense); with
// answers, the answerer (and the judge) answer a sample from memgate's and BM25's
// blocks.
func evaluateLocomo(run locomoRun, o locomoOptions, convs []locomoConversation, dense *embedder, answers bool) (*locomoResult, error) {
	srv, err := serve(o.binary, run.env)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	base := srv.base
	api := client.New(base, "", "locomo")
	api.HTTP.Timeout = 2 * time.Minute
	start := time.Now()
	spaces, err := ingestLocomo(api, convs)
	if err != nil {
		return nil, err
	}
	res := &locomoResult{conversions: len(convs), ingest: time.Since(start)}
	for _, s := range spaces {
		res.memories += len(s.Dias)
	}
	if err := askLocomo(api, run.name, convs, spaces, dense, res); err != nil {
		return nil, err
	}
	if answers && (o.answerer != nil || o.judge != nil) {
		res.answerer, res.judge = o.answerer, o.judge
		if err := answerAll(context.Background(), answerSample(res.asked, o.answers), res.systems[:2], o.answerer, o.judge); err != nil {
			return nil, fmt.Errorf("answering: %w", err)
		}
	}
	return res, nil
}

// locomoSpace is a conversation as memgate holds it: its agent, and the dia_id of each
// memory by id.
type locomoSpace struct {
	Agent string
	Dias  map[string]string // memory id -> dia_id
}

// ingestLocomo writes every conversation through the API, side by side, each in its
// order, ten turns a write, and waits until each is extracted.
func ingestLocomo(api *client.Client, convs []locomoConversation) ([]locomoSpace, error) {
	ctx := context.Background()
	mark := fmt.Sprintf("%x", time.Now().UnixNano())[8:]
	spaces := make([]locomoSpace, len(convs))
	var wg sync.WaitGroup
	errs := make([]error, len(convs))
	for ci, c := range convs {
		sp := &spaces[ci]
		sp.Agent, sp.Dias = "locomo-"+c.ID+"-"+mark, map[string]string{}
		if err := api.CreateAgent(ctx, sp.Agent); err != nil {
			return nil, err
		}
		wg.Go(func() {
			lastID := ""
			for from := 0; from < len(c.Turns); from += 10 {
				var items []client.Memory
				for _, t := range c.Turns[from:min(from+10, len(c.Turns))] {
					at := t.At
					items = append(items, client.Memory{AgentID: sp.Agent, ReferenceTime: &at,
						Messages: []map[string]string{{"role": "user", "name": t.Speaker, "content": t.Text}}})
				}
				got, err := api.AddBatch(ctx, items, "")
				if err != nil {
					errs[ci] = err
					return
				}
				for i, r := range got {
					if r.Error != nil {
						errs[ci] = r.Error
						return
					}
					sp.Dias[r.ID] = c.Turns[from+i].DiaID
					lastID = r.ID
				}
			}
			// A space is extracted in order: its last memory done, all are.
			status, err := waitDone(ctx, api, lastID)
			if err == nil && status != "done" {
				err = fmt.Errorf("memory %s %s", lastID, status)
			}
			errs[ci] = err
		})
	}
	wg.Wait()
	for ci, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("conversation %s: %w", convs[ci].ID, err)
		}
	}
	return spaces, nil
}

// askLocomo asks every question of every conversation of memgate (search and context)
// and of the baselines over its turns, and scores each into res.
func askLocomo(api *client.Client, name string, convs []locomoConversation, spaces []locomoSpace, dense *embedder, res *locomoResult) error {
	ctx := context.Background()
	tok, err := service.NewTokenizer(service.DefaultTokenizer)
	if err != nil {
		return err
	}
	mem := newTally("memgate ("+name+")", true)
	bm := newTally("BM25 over turns, packed", true)
	last := newTally("the last turns", false)
	var dn, rrf *locomoTally
	if dense != nil {
		dn, rrf = newTally("dense cosine over turns ("+dense.model+"), packed", true), newTally("BM25 and dense fused (RRF), packed", true)
	}
	for ci, c := range convs {
		sp := spaces[ci]
		index := bm25Of(c)
		var vectors [][]float32
		if dense != nil {
			texts := make([]string, len(c.Turns))
			for i, t := range c.Turns {
				texts[i] = t.Speaker + ": " + t.Text
			}
			if vectors, err = dense.embed(ctx, dense.documentPrefix, texts); err != nil {
				return err
			}
		}
		recentIDs, recentText, recentTokens := recent(c.Turns, tok, locomoBudget)
		for _, q := range c.QA {
			a := locomoAsked{q: q, blocks: map[*locomoTally]string{}}
			began := time.Now()
			var found struct {
				Episodes []struct{ ID string } `json:"episodes"`
			}
			if err := api.Search(ctx, map[string]any{"agent_id": sp.Agent, "query": q.Question, "limit": 20,
				"include": []string{"episodes"}}, &found); err != nil {
				return err
			}
			mem.search = append(mem.search, time.Since(began))
			var ranked []string
			for _, e := range found.Episodes {
				ranked = append(ranked, sp.Dias[e.ID])
			}
			began = time.Now()
			block, err := api.Context(ctx, sp.Agent, client.ContextRequest{Query: q.Question, MaxTokens: locomoBudget})
			if err != nil {
				return err
			}
			mem.block = append(mem.block, time.Since(began))
			var inBlock []string
			for _, id := range block.Episodes {
				inBlock = append(inBlock, sp.Dias[id])
			}
			mem.add(q, ranked, inBlock, block.Context, block.Tokens)
			a.blocks[mem] = block.Context

			last.add(q, nil, recentIDs, recentText, recentTokens)
			bmOrder := index.rank(q.Question)
			bmIDs, bmText, bmTokens := pack(c.Turns, bmOrder, tok, locomoBudget)
			bm.add(q, dias(c.Turns, bmOrder), bmIDs, bmText, bmTokens)
			a.blocks[bm] = bmText
			res.asked = append(res.asked, a)
			if dense != nil {
				qv, err := dense.embed(ctx, dense.queryPrefix, []string{q.Question})
				if err != nil {
					return err
				}
				scores := make([]float64, len(vectors))
				for i, v := range vectors {
					scores[i] = graph.Cosine(qv[0], v)
				}
				dOrder := order(scores)
				ids, text, tokens := pack(c.Turns, dOrder, tok, locomoBudget)
				dn.add(q, dias(c.Turns, dOrder), ids, text, tokens)
				fOrder := fuse(bmOrder, dOrder)
				ids, text, tokens = pack(c.Turns, fOrder, tok, locomoBudget)
				rrf.add(q, dias(c.Turns, fOrder), ids, text, tokens)
			}
		}
	}
	res.systems = []*locomoTally{mem, bm} // memgate and BM25 first: the answered ones
	if dense != nil {
		res.systems = append(res.systems, dn, rrf)
	}
	res.systems = append(res.systems, last)
	return nil
}

func bm25Of(c locomoConversation) *bm25 { return newBM25(c.Turns) }

// dias are the dia_ids of turns in order.
func dias(turns []locomoTurn, order []int) []string {
	out := make([]string, len(order))
	for i, j := range order {
		out[i] = turns[j].DiaID
	}
	return out
}

// percentile is the p-th percentile of ds (0 for none).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1)]
}

const locomoStart, locomoEnd = "<!-- locomo:start -->", "<!-- locomo:end -->"

// renderLocomo is the LoCoMo section of BENCHMARKS.md: per run, the overall table of
// every system, and per category.
func renderLocomo(results []*locomoResult, runs []locomoRun, command string) string {
	var b strings.Builder
	b.WriteString("## LoCoMo (make eval)\n\n")
	fmt.Fprintf(&b, "Measured %s with `%s`. ", time.Now().UTC().Format("2006-01-02"), command)
	b.WriteString("Every question of categories 1-4 of the conversations read (one agent per conversation, one memory per turn " +
		"with its session's time and its speaker), through search (`limit` 20, memories) and the context endpoint " +
		"(`max_tokens` 1000), beside baselines over the same turns: their best turns packed into a block of the same budget, " +
		"and the conversation's last turns. Evidence recall@k: the share of a question's evidence turns among the first k " +
		"memories search ranks; evidence in block: among the memories a block holds; answer words: the share of the gold " +
		"answer's words (lower-cased, stop words out) in the block's text.\n\n")
	for ri, r := range results {
		fmt.Fprintf(&b, "### %s\n\n%d conversations, %d memories ingested in %.1f s (%.1f memories/s end to end).\n\n",
			runs[ri].name, r.conversions, r.memories, r.ingest.Seconds(), float64(r.memories)/r.ingest.Seconds())
		b.WriteString("| system | recall@5 | recall@10 | recall@20 | evidence in block | answer words in block | block tokens | search p50 / p95 ms | context p50 / p95 ms |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
		for _, s := range r.systems {
			t := s.total()
			n := float64(max(1, t.n))
			rec := "–"
			if s.ranked {
				rec = fmt.Sprintf("%.3f | %.3f | %.3f", t.recall[0]/n, t.recall[1]/n, t.recall[2]/n)
			} else {
				rec = "– | – | –"
			}
			lat := "– | –"
			if len(s.search) > 0 {
				lat = fmt.Sprintf("%.0f / %.0f | %.0f / %.0f", ms(percentile(s.search, .5)), ms(percentile(s.search, .95)),
					ms(percentile(s.block, .5)), ms(percentile(s.block, .95)))
			}
			fmt.Fprintf(&b, "| %s | %s | %.3f | %.3f | %.0f | %s |\n", s.name, rec, t.inBlock/n, t.answerWords/n, t.tok/n, lat)
		}
		b.WriteString("\nPer category (questions: ")
		first := r.systems[0]
		for i, c := range locomoCategories {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %d", c.name, first.byCat[c.n].n)
		}
		b.WriteString("): recall@10 / evidence in block / answer words in block.\n\n| system |")
		for _, c := range locomoCategories {
			b.WriteString(" " + c.name + " |")
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(locomoCategories)) + "\n")
		for _, s := range r.systems {
			fmt.Fprintf(&b, "| %s |", s.name)
			for _, c := range locomoCategories {
				x := s.byCat[c.n]
				n := float64(max(1, x.n))
				rec := "–"
				if s.ranked {
					rec = fmt.Sprintf("%.3f", x.recall[1]/n)
				}
				fmt.Fprintf(&b, " %s / %.3f / %.3f |", rec, x.inBlock/n, x.answerWords/n)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
		renderAnswers(&b, r)
	}
	return b.String()
}

// renderAnswers is the table of the answers from each block, when there were any.
func renderAnswers(b *strings.Builder, r *locomoResult) {
	var answered []*locomoTally
	for _, s := range r.systems {
		if t := s.total(); t.answered+t.judged > 0 {
			answered = append(answered, s)
		}
	}
	if len(answered) == 0 {
		return
	}
	t := answered[0].total()
	fmt.Fprintf(b, "Answers to %d of the questions (", max(t.answered, t.judged))
	for i, c := range locomoCategories {
		if i > 0 {
			b.WriteString(", ")
		}
		x := answered[0].byCat[c.n]
		fmt.Fprintf(b, "%s %d", c.name, max(x.answered, x.judged))
	}
	b.WriteString(", at even steps through each category) from each system's block.")
	if r.answerer != nil {
		fmt.Fprintf(b, " Token F1 of %s's answers (`%s`) against the gold answer: lower-cased, punctuation, articles and \"and\" out, no stemming; "+
			"a multi-hop answer's parts (split at commas) each matched with the best part answered.", r.answerer.name, r.answerer.model)
	}
	if r.judge != nil {
		fmt.Fprintf(b, " Judge: %s answered from the same blocks and judged each answer correct or wrong against the gold one; the share correct.", r.judge.name)
	}
	b.WriteString("\n\n| system | overall |")
	for _, c := range locomoCategories {
		b.WriteString(" " + c.name + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(locomoCategories)) + "\n")
	cell := func(x locomoSums) string {
		var parts []string
		if x.answered > 0 {
			parts = append(parts, fmt.Sprintf("F1 %.3f", x.f1/float64(x.answered)))
		}
		if x.judged > 0 {
			parts = append(parts, fmt.Sprintf("judge %.3f", float64(x.correct)/float64(x.judged)))
		}
		return strings.Join(parts, ", ")
	}
	for _, s := range answered {
		fmt.Fprintf(b, "| %s | %s |", s.name, cell(s.total()))
		for _, c := range locomoCategories {
			fmt.Fprintf(b, " %s |", cell(*s.byCat[c.n]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// locomoOptions are what runLocomo measures and with what.
type locomoOptions struct {
	binary, neo4jURI, dir  string
	limit                  int // conversations; 0: all
	embedderURL, model     string
	queryPrefix, docPrefix string // the model's (embedder.query_prefix, document_prefix)
	dims                   int
	answerer, judge        *chatModel // nil: no answers; no judge
	answers                int        // the questions answered
	out                    string     // the file whose LoCoMo section is written; "": print only
}

// runLocomo measures memgate on the LoCoMo conversations of o.dir, once with the
// hashing embedder and, with o.embedderURL, once with that sentence model as its
// embedder (the database emptied and its vector indexes dropped between the two: they
// differ in dimensions), the answers in the last run, and writes the tables into
// o.out's LoCoMo section.
func runLocomo(o locomoOptions) error {
	convs, err := readLocomo(o.dir)
	if err != nil {
		return err
	}
	if o.limit > 0 && o.limit < len(convs) {
		convs = convs[:o.limit]
	}
	embedderURL, embedderModel, dims := o.embedderURL, o.model, o.dims
	runs := []locomoRun{{name: "offline extractor, hashing embedder", env: map[string]string{
		"MEMGATE_LLM_PROVIDER": "heuristic", "MEMGATE_EMBEDDER_PROVIDER": "hashing", "MEMGATE_EMBEDDER_DIMENSIONS": "256"}}}
	var dense *embedder
	if embedderURL != "" {
		dense = &embedder{url: embedderURL, model: embedderModel, queryPrefix: o.queryPrefix, documentPrefix: o.docPrefix}
		runs = append(runs, locomoRun{name: "offline extractor, " + embedderModel + " embedder", env: map[string]string{
			"MEMGATE_LLM_PROVIDER": "heuristic", "MEMGATE_EMBEDDER_PROVIDER": "openai", "MEMGATE_EMBEDDER_BASE_URL": embedderURL,
			"MEMGATE_EMBEDDER_MODEL": embedderModel, "MEMGATE_EMBEDDER_DIMENSIONS": fmt.Sprint(dims), "MEMGATE_EMBEDDER_API_KEY": "local",
			"MEMGATE_EMBEDDER_QUERY_PREFIX": o.queryPrefix, "MEMGATE_EMBEDDER_DOCUMENT_PREFIX": o.docPrefix}})
	}
	var results []*locomoResult
	for ri, r := range runs {
		if err := emptyStore(o.neo4jURI); err != nil {
			return err
		}
		for k, v := range map[string]string{"MEMGATE_SERVER_ADDR": "127.0.0.1:0", "MEMGATE_NEO4J_URI": o.neo4jURI,
			"MEMGATE_SERVER_RATE_LIMIT": "0", "MEMGATE_INGEST_WORKERS": "2"} {
			r.env[k] = v
		}
		res, err := evaluateLocomo(r, o, convs, dense, ri == len(runs)-1)
		if err != nil {
			return fmt.Errorf("locomo, %s: %w", r.name, err)
		}
		results = append(results, res)
	}
	report := renderLocomo(results, runs, strings.Join(append([]string{"go run ./eval"}, os.Args[1:]...), " "))
	fmt.Print(report)
	if o.out == "" {
		return nil
	}
	return writeSection(o.out, locomoStart, locomoEnd, report)
}

// emptyStore erases every node of the database (in batches) and drops the vector
// indexes, which the next memgate makes again in its embedder's dimensions.
func emptyStore(uri string) error {
	ctx := context.Background()
	driver, err := neo4j.NewDriverWithContext(uri, neo4j.NoAuth())
	if err != nil {
		return err
	}
	defer driver.Close(ctx)
	for _, q := range []string{
		"MATCH (n) WHERE NOT n:MemgateSchema CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
		"DROP INDEX entity_name_embedding IF EXISTS", "DROP INDEX edge_fact_embedding IF EXISTS",
	} {
		// An auto-commit query: CALL ... IN TRANSACTIONS runs in no other.
		session := driver.NewSession(ctx, neo4j.SessionConfig{})
		res, err := session.Run(ctx, q, nil)
		if err == nil {
			_, err = res.Consume(ctx)
		}
		session.Close(ctx)
		if err != nil {
			return fmt.Errorf("emptying the store (%s): %w", q, err)
		}
	}
	return nil
}
