package graph

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TurnMeaning: a query's cosine with the direction, times the weight, is the mean of
// its cosines with the two vectors, whatever their lengths; opposite vectors have no
// direction; vectors of other dimensions none either.
func TestTurnMeaning(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vec := func(scale float64) []float32 {
		v := make([]float32, 16)
		for i := range v {
			v[i] = float32(scale * r.NormFloat64())
		}
		return v
	}
	for range 100 {
		alone, turn, q := vec(1), vec(3), vec(0.5)
		dir, weight := TurnMeaning(alone, turn)
		got, want := Cosine(q, dir)*weight, (Cosine(q, alone)+Cosine(q, turn))/2
		if math.Abs(got-want) > 1e-6 || weight <= 0 || weight > 1 {
			t.Fatalf("cosine×weight %.7f (weight %.4f), mean of cosines %.7f", got, weight, want)
		}
	}
	v := vec(1)
	minus := make([]float32, len(v))
	for i, x := range v {
		minus[i] = -x
	}
	if dir, w := TurnMeaning(v, minus); dir != nil || w != 0 {
		t.Errorf("opposite vectors: direction %v, weight %v; want none", dir, w)
	}
	if dir, _ := TurnMeaning(v, v[:8]); dir != nil {
		t.Error("vectors of two dimensions: a direction")
	}
}
