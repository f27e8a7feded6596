package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// A summary's budget is in bytes of UTF-8: a byte-level BPE tokenizer (GPT's cl100k and
// o200k, Llama 3, Qwen) never makes more tokens of a text than it has bytes, so a
// summary of at most N bytes is at most N tokens whatever the model reading it.

// Cut shortens text to at most maxBytes bytes: after the last sentence that ends
// in the second half of the limit, else at the last space there, never inside a
// character.
func Cut(text string, maxBytes int) string {
	text = strings.TrimSpace(text)
	if len(text) <= maxBytes {
		return text
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	if i := strings.LastIndex(text[:cut], ". "); i+1 > cut/2 {
		cut = i + 1
	} else if i := strings.LastIndexByte(text[:cut], ' '); i > cut/2 {
		cut = i
	}
	return strings.TrimSpace(text[:cut])
}

// Extractive is the offline summarizer: whole sentences of the memories, the newest
// first chosen, repeated ones once, an assistant's lines left out (it acknowledges and
// asks), put back in the order they were written, within the budget.
type Extractive struct{}

func (Extractive) Summarize(_ context.Context, texts []string, maxBytes int) (string, error) {
	var sentences []string // oldest first
	for _, text := range texts {
		for _, line := range strings.Split(text, "\n") {
			name, role := lineRole(line)
			if role == "assistant" || role == "system" {
				continue
			}
			if m := speakerLine.FindStringIndex(line); m != nil {
				if line = line[m[1]:]; name != "" {
					line = name + ": " + line
				}
			}
			for _, s := range sentenceEnd.Split(line, -1) {
				if s = strings.TrimSpace(s); s != "" {
					sentences = append(sentences, s+".")
				}
			}
		}
	}
	seen := map[string]bool{}
	var chosen []int
	used := 0
	for i := len(sentences) - 1; i >= 0; i-- {
		key := Normalize(sentences[i])
		if seen[key] {
			continue
		}
		seen[key] = true
		if used+len(sentences[i])+1 > maxBytes {
			if len(chosen) == 0 { // one long sentence: its beginning
				return Cut(sentences[i], maxBytes), nil
			}
			continue // a shorter, older one may still fit
		}
		used += len(sentences[i]) + 1
		chosen = append(chosen, i)
	}
	slices.Sort(chosen)
	parts := make([]string, len(chosen))
	for j, i := range chosen {
		parts[j] = sentences[i]
	}
	return Cut(strings.Join(parts, " "), maxBytes), nil
}

const summaryInstructions = `You compact an AI agent's memories (inside <memories>, oldest first) into one short summary the agent can keep in its context instead of them.
Keep what the agent will need later: who is who, what holds now (jobs, places, relations, preferences, decisions, open tasks), with their dates; say what changed, not every step. Leave out greetings, small talk and anything the memories do not say. Write plain sentences, no preamble, no lists.
Answer with a JSON object {"summary": "..."}; the summary must be at most %d characters.`

// summaryAnswer is a summary call's answer; the schema it is asked to follow is
// derived from it. A missing or null summary is malformed, an empty one is not.
type summaryAnswer struct {
	Summary string `json:"summary"`
}

// Summarize makes one chat call: the memories in, a summary of at most maxBytes bytes
// out (cut there when the model writes more), the call's output bounded by as many
// tokens as the budget allows plus the JSON around it.
func (o *OpenAI) Summarize(ctx context.Context, texts []string, maxBytes int) (string, error) {
	var user strings.Builder
	user.WriteString("<memories>\n")
	for _, t := range texts {
		fmt.Fprintf(&user, "<memory>\n%s\n</memory>\n", strings.TrimSpace(t))
	}
	user.WriteString("</memories>")
	var summary string
	schema := answerSchema[summaryAnswer](nil)
	err := o.structured(ctx, fmt.Sprintf(summaryInstructions, maxBytes), user.String(), "summary", schema, maxBytes+64,
		func(content string) error {
			var out summaryAnswer
			if err := json.Unmarshal([]byte(content), &out); err != nil || !given(content, "summary") {
				return errMalformed{"not the summary JSON"}
			}
			summary = out.Summary
			return nil
		})
	return Cut(summary, maxBytes), err
}

// maxRules is how many rules a reflection keeps.
const maxRules = 5

// instruction marks a sentence the offline reflection keeps as a rule: a standing
// preference, need or instruction.
var instruction = regexp.MustCompile(`(?i)\b(always|never|prefer|prefers|don't|do not|please|allergic|avoid|must|should)\b`)

// Reflect is the offline reflection: the extractive summary of the memories and the
// current facts, and as rules the sentences of the memories that state a preference,
// a need or an instruction ("I'm allergic to shellfish", "never book before 9").
func (x Extractive) Reflect(ctx context.Context, texts, facts []string, maxBytes int) (string, []string, error) {
	var rules []string
	used := 0
	for i := len(texts) - 1; i >= 0 && len(rules) < maxRules; i-- {
		sentences, _ := x.Summarize(ctx, texts[i:i+1], len(texts[i]))
		for _, s := range sentenceEnd.Split(sentences, -1) {
			s = strings.TrimSpace(s)
			if s == "" || !instruction.MatchString(s) || len(rules) == maxRules || used+len(s)+1 > maxBytes/2 {
				continue
			}
			if !slices.ContainsFunc(rules, func(r string) bool { return Normalize(r) == Normalize(s+".") }) {
				rules = append(rules, s+".")
				used += len(s) + 1
			}
		}
	}
	summary, err := x.Summarize(ctx, append(slices.Clone(texts), strings.Join(facts, ". ")), maxBytes-used)
	return summary, rules, err
}

const reflectionInstructions = `You reflect on an AI agent's recent memories (inside <memories>, oldest first) and the facts it knows (inside <facts>) to distill what it should keep long term.
Answer with a JSON object {"summary": "...", "rules": ["...", ...]}:
  "summary": who and what matters now, what changed, open threads, with dates; plain sentences, no preamble;
  "rules": at most %d standing preferences, needs or instructions the agent should follow from now on ("Book no seafood restaurants: Priya is allergic to shellfish."), each one sentence; none when the memories give none.
Use only what the memories and facts say. Summary and rules together must be at most %d characters.`

// reflectionAnswer is a reflection call's answer; the schema it is asked to follow is
// derived from it. A missing or null summary is malformed, missing rules are none.
type reflectionAnswer struct {
	Summary string   `json:"summary"`
	Rules   []string `json:"rules"`
}

// Reflect makes one chat call: memories and facts in, a summary and up to maxRules
// rules out, together at most maxBytes bytes (the rules first kept, the summary cut
// to what is left), the call's output bounded by the budget's tokens and the JSON.
func (o *OpenAI) Reflect(ctx context.Context, texts, facts []string, maxBytes int) (string, []string, error) {
	var user strings.Builder
	user.WriteString("<memories>\n")
	for _, t := range texts {
		fmt.Fprintf(&user, "<memory>\n%s\n</memory>\n", strings.TrimSpace(t))
	}
	user.WriteString("</memories>\n<facts>\n")
	for _, f := range facts {
		user.WriteString(f + "\n")
	}
	user.WriteString("</facts>")
	var out reflectionAnswer
	schema := answerSchema[reflectionAnswer](nil)
	err := o.structured(ctx, fmt.Sprintf(reflectionInstructions, maxRules, maxBytes), user.String(), "reflection", schema,
		maxBytes+128, func(content string) error {
			var got reflectionAnswer
			if err := json.Unmarshal([]byte(content), &got); err != nil || !given(content, "summary") {
				return errMalformed{"not the reflection JSON"}
			}
			out = got
			return nil
		})
	if err != nil {
		return "", nil, err
	}
	var rules []string
	used := 0
	for _, r := range out.Rules {
		if r = Cut(r, maxBytes/2); r != "" && len(rules) < maxRules && used+len(r) <= maxBytes/2 {
			rules = append(rules, r)
			used += len(r)
		}
	}
	return Cut(out.Summary, maxBytes-used), rules, nil
}
