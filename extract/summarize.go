package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// A summary's budget is in bytes of UTF-8: a byte-level BPE tokenizer (GPT's cl100k and
// o200k, Llama 3, Qwen) never makes more tokens of a text than it has bytes, so a
// summary of at most N bytes is at most N tokens whatever the model reading it.

// Cut shortens text to at most maxBytes bytes, at the last space before the limit
// when there is one in its second half, never inside a character.
func Cut(text string, maxBytes int) string {
	text = strings.TrimSpace(text)
	if len(text) <= maxBytes {
		return text
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(text[:cut], ' '); i > cut/2 {
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
	schema, _ := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "required": []string{"summary"},
		"properties": map[string]any{"summary": map[string]any{"type": "string"}}})
	var summary string
	err := o.structured(ctx, fmt.Sprintf(summaryInstructions, maxBytes), user.String(), "summary", schema, maxBytes+64,
		func(content string) error {
			var out struct {
				Summary *string `json:"summary"`
			}
			if err := json.Unmarshal([]byte(content), &out); err != nil || out.Summary == nil {
				return errMalformed{"not the summary JSON"}
			}
			summary = *out.Summary
			return nil
		})
	return Cut(summary, maxBytes), err
}
