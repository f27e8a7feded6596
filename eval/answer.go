package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	openai "github.com/sashabaranov/go-openai"
)

// Answers, not only blocks: a model answers a sample of LoCoMo's questions from a
// block (memgate's context, or a baseline's packed turns), scored by token F1 against
// the gold answer (LoCoMo's own measure), and, when a judge is named, judged correct
// or wrong by it (the protocol published LoCoMo results follow).

// chatModel is an OpenAI-compatible chat endpoint and model.
type chatModel struct {
	name   string
	client *openai.Client
	model  string
}

func newChatModel(name, baseURL, model, key string) *chatModel {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = strings.TrimRight(baseURL, "/")
	return &chatModel{name: name, client: openai.NewClientWithConfig(cfg), model: model}
}

// say is the model's answer to one exchange, at temperature 0.
func (m *chatModel) say(ctx context.Context, system, user string, maxTokens int, jsonOut bool) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	req := openai.ChatCompletionRequest{Model: m.model, Temperature: 0,
		//lint:ignore SA1019 max_tokens is what OpenAI-compatible servers read; max_completion_tokens is OpenAI's alone
		MaxTokens: maxTokens,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system}, {Role: openai.ChatMessageRoleUser, Content: user}}}
	if jsonOut {
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	resp, err := m.client.CreateChatCompletion(ctx, req)
	if err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 {
		return "", fmt.Errorf("%s: no answer", m.name)
	}
	return strings.TrimSpace(resp.Choices[0].Message.Content), nil
}

const answerSystem = `You are given memory from a long conversation between two people, then a question about them.
Answer from the memory only, as briefly as you can: a name, a date, a number or a few words, never a whole sentence.
Give dates as the memory states them (for example 7 May 2023, or May 2023). When the memory does not settle the question, give your best short guess from it.`

// answer is the model's short answer to question from block.
func (m *chatModel) answer(ctx context.Context, block, question string) (string, error) {
	a, err := m.say(ctx, answerSystem, "Memory:\n"+block+"\n\nQuestion: "+question+"\nShort answer:", 48, false)
	if i := strings.IndexByte(a, '\n'); i >= 0 {
		a = a[:i] // the answer's first line: a small model may go on
	}
	return strings.TrimSpace(a), err
}

const judgeSystem = `You grade answers to questions about a conversation. You get the question, the gold answer and a generated answer.
The generated answer is CORRECT when it means the same as the gold answer or contains it: other wording, a shorter or longer form, or a date written another way that names the same day, month or year all count. It is WRONG when it names something else, misses the point, or says it does not know.
Reply with a JSON object: {"label": "CORRECT"} or {"label": "WRONG"}.`

// judge says whether got answers question as gold does.
func (m *chatModel) judge(ctx context.Context, question, gold, got string) (bool, error) {
	out, err := m.say(ctx, judgeSystem, fmt.Sprintf("Question: %s\nGold answer: %s\nGenerated answer: %s", question, gold, got), 20, true)
	if err != nil {
		return false, err
	}
	var v struct{ Label string }
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		return false, fmt.Errorf("%s: the judge's answer %q is not its JSON", m.name, out)
	}
	return strings.EqualFold(strings.TrimSpace(v.Label), "CORRECT"), nil
}

// answerTokens are an answer's words for token F1, normalized as LoCoMo's and SQuAD's
// scorers do: lower-cased, punctuation out, the articles and "and" out.
func answerTokens(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		switch w {
		case "a", "an", "the", "and":
		default:
			out = append(out, w)
		}
	}
	return out
}

// tokenF1 is the F1 of got's tokens against gold's (their multisets' overlap). For a
// multi-hop question, whose gold answer lists several parts ("Paris, Rome"), it is
// the mean over the gold's parts of the best F1 of any part of got, as LoCoMo scores
// its category 1.
func tokenF1(gold, got string, multi bool) float64 {
	if !multi {
		return f1(answerTokens(gold), answerTokens(got))
	}
	golds, gots := strings.Split(gold, ","), strings.Split(got, ",")
	sum := 0.0
	for _, g := range golds {
		best := 0.0
		for _, a := range gots {
			best = max(best, f1(answerTokens(g), answerTokens(a)))
		}
		sum += best
	}
	return sum / float64(len(golds))
}

func f1(gold, got []string) float64 {
	if len(gold) == 0 || len(got) == 0 {
		if len(gold) == len(got) {
			return 1
		}
		return 0
	}
	count := map[string]int{}
	for _, w := range gold {
		count[w]++
	}
	common := 0
	for _, w := range got {
		if count[w] > 0 {
			count[w]--
			common++
		}
	}
	if common == 0 {
		return 0
	}
	p, r := float64(common)/float64(len(got)), float64(common)/float64(len(gold))
	return 2 * p * r / (p + r)
}

// locomoAsked is one question asked, with the block each system gave for it.
type locomoAsked struct {
	q      locomoQA
	blocks map[*locomoTally]string
}

// answerSample is the questions a model answers: up to n, as evenly as can be across
// the categories, each category's taken at even steps through the run (so every
// conversation has its share).
func answerSample(asked []locomoAsked, n int) []locomoAsked {
	per := map[int][]locomoAsked{}
	for _, a := range asked {
		per[a.q.Category] = append(per[a.q.Category], a)
	}
	var out []locomoAsked
	left := n
	for i, c := range locomoCategories {
		want := left / (len(locomoCategories) - i)
		qs := per[c.n]
		take := min(want, len(qs))
		for k := range take {
			out = append(out, qs[k*len(qs)/take])
		}
		left -= take
	}
	return out
}

// answerAll answers every sampled question from each system's block: the answerer's
// answers scored by token F1, the judge's (when there is one: it answers and judges,
// as in the published protocol) judged correct or wrong, into the systems' tallies.
func answerAll(ctx context.Context, sample []locomoAsked, systems []*locomoTally, answerer, judge *chatModel) error {
	for _, a := range sample {
		for _, s := range systems {
			block, sums := a.blocks[s], s.byCat[a.q.Category]
			if answerer != nil {
				got, err := answerer.answer(ctx, block, a.q.Question)
				if err != nil {
					return err
				}
				sums.answered++
				sums.f1 += tokenF1(a.q.Answer, got, a.q.Category == 1)
			}
			if judge != nil {
				got, err := judge.answer(ctx, block, a.q.Question)
				if err != nil {
					return err
				}
				ok, err := judge.judge(ctx, a.q.Question, a.q.Answer, got)
				if err != nil {
					return err
				}
				sums.judged++
				if ok {
					sums.correct++
				}
			}
		}
	}
	return nil
}
