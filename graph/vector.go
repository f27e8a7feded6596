package graph

import "math"

// Cosine is the cosine similarity of two embeddings of one dimension; 0 when they
// differ in length or one is zero.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// TurnMeaning is what search compares a query with to rank a turn by its content alone
// and read after the turn before it at once: the direction of the mean of the two
// vectors (each made unit length first) and that mean's length, weight. A query's
// cosine with dir times weight is the mean of its cosines with the two; one
// comparison instead of two (_episode_meaning). dir is nil when the mean is zero.
func TurnMeaning(alone, turn []float32) (dir []float32, weight float64) {
	if len(alone) != len(turn) {
		return nil, 0
	}
	na, nt := norm(alone), norm(turn)
	if na == 0 || nt == 0 {
		return nil, 0
	}
	mean := make([]float64, len(alone))
	for i := range alone {
		mean[i] = (float64(alone[i])/na + float64(turn[i])/nt) / 2
		weight += mean[i] * mean[i]
	}
	weight = math.Sqrt(weight)
	if weight == 0 {
		return nil, 0
	}
	dir = make([]float32, len(mean))
	for i, x := range mean {
		dir[i] = float32(x / weight)
	}
	return dir, weight
}

func norm(v []float32) float64 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	return math.Sqrt(n)
}
