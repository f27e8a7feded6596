package extract

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Hashing is the offline embedder: feature hashing of word unigrams and bigrams and
// of character trigrams into a fixed number of dimensions, L2-normalised. Texts that
// share words land near each other; it knows nothing of synonyms. No network, no key.
type Hashing struct {
	Dimensions int
}

func (h Hashing) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.vector(t)
	}
	return out, nil
}

// EmbedQuery embeds a query as anything else: hashing has no prefixes.
func (h Hashing) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return h.vector(text), nil
}

func (h Hashing) vector(text string) []float32 {
	v := make([]float32, h.Dimensions)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	add := func(feature string, weight float32) {
		f := fnv.New64a()
		f.Write([]byte(feature))
		sum := f.Sum64()
		sign := float32(1)
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%uint64(h.Dimensions)] += sign * weight
	}
	for i, w := range words {
		add("w:"+w, 1)
		if i > 0 {
			add("b:"+words[i-1]+" "+w, 0.5)
		}
		padded := []rune(" " + w + " ")
		for j := 0; j+3 <= len(padded); j++ {
			add("c:"+string(padded[j:j+3]), 0.25)
		}
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm > 0 {
		inv := float32(1 / math.Sqrt(norm))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}
