package service

import (
	"fmt"
	"slices"

	"github.com/tiktoken-go/tokenizer"
)

// Tokenizers are the token encodings context.tokenizer may name: o200k_base (GPT-4o
// and later) and cl100k_base (GPT-4, GPT-3.5). Their tables are built into the binary;
// counting needs no network.
var Tokenizers = []string{string(tokenizer.O200kBase), string(tokenizer.Cl100kBase)}

// DefaultTokenizer is the encoding a Service without one counts with.
const DefaultTokenizer = "o200k_base"

// Tokenizer counts the tokens of a text as a model's encoding splits it.
type Tokenizer struct {
	Name  string
	codec tokenizer.Codec
}

// NewTokenizer returns the encoding name names, one of Tokenizers.
func NewTokenizer(name string) (*Tokenizer, error) {
	if !slices.Contains(Tokenizers, name) {
		return nil, fmt.Errorf("unknown tokenizer %q; memgate counts with %v", name, Tokenizers)
	}
	codec, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		return nil, err
	}
	return &Tokenizer{Name: name, codec: codec}, nil
}

// Count is the number of tokens of text.
func (t *Tokenizer) Count(text string) int {
	n, _ := t.codec.Count(text) // an error only in the strict mode, which is not set
	return n
}
