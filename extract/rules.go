package extract

import (
	"context"

	"github.com/memgate/memgate/graph"
)

// WithRules is a model's extraction checked against the offline extractor's rules
// (llm.rules). A small local model misses facts a sentence states plainly ("I left
// Acme at the end of May", "he is leaving Acme") and shifts dates the text gives
// outright; the rules find few facts, but those they find hold. So, per fact the rules
// find:
//   - the model has it too (the same two entities, either way round, and the same
//     relation): it keeps the model's wording and takes the rules' direction, and the
//     rules' start and end when the model has none or another month (a small model
//     puts the reference time where the text said "in April");
//   - the model has another relation between the two: the rules' fact is added only
//     when it is an ending (it ends the stored fact of its relation);
//   - the model has nothing between the two: the rules' fact is added, with whichever
//     of its entities the model did not list.
//
// The rules read the same episode and earlier episodes the model did; they cost no call.
type WithRules struct {
	Model Extractor
}

func (w WithRules) Extract(ctx context.Context, ep *graph.Episode, previous []*graph.Episode) (*graph.Extracted, error) {
	x, err := w.Model.Extract(ctx, ep, previous)
	if err != nil || x == nil {
		return x, err
	}
	rules, err := Heuristic{}.Extract(ctx, ep, previous)
	if err != nil {
		return nil, err
	}
	complement(x, rules)
	return x, nil
}

// complement adds to x what rules found (see WithRules).
func complement(x, rules *graph.Extracted) {
	known := map[string]string{} // normalised name -> the name x lists
	for _, e := range x.Entities {
		known[Normalize(e.Name)] = e.Name
	}
	ruleType := map[string]string{}
	for _, e := range rules.Entities {
		ruleType[e.Name] = e.Type
	}
	// listed is x's name for a rules entity, listing it first when x has none.
	listed := func(name string) string {
		if n := salvage(name, known); n != "" {
			return n
		}
		x.Entities = append(x.Entities, graph.ExtractedEntity{Name: name, Type: ruleType[name]})
		known[Normalize(name)] = name
		return name
	}
	for _, r := range rules.Facts {
		src, tgt := salvage(r.Source, known), salvage(r.Target, known)
		var same, between *graph.ExtractedFact
		for i := range x.Facts {
			f := &x.Facts[i]
			a, b := salvage(f.Source, known), salvage(f.Target, known)
			if src == "" || tgt == "" || !(a == src && b == tgt || a == tgt && b == src) {
				continue
			}
			between = f
			if relationName(f.Relation) == r.Relation {
				same = f
				break
			}
		}
		switch {
		case same != nil:
			same.Source, same.Target = src, tgt
			if r.ValidAt != nil && (same.ValidAt == nil || same.ValidAt.Format("2006-01") != r.ValidAt.Format("2006-01")) {
				same.ValidAt = r.ValidAt
			}
			if r.InvalidAt != nil && (same.InvalidAt == nil || same.InvalidAt.Format("2006-01") != r.InvalidAt.Format("2006-01")) {
				same.InvalidAt = r.InvalidAt
			}
		case between == nil || r.InvalidAt != nil:
			r.Source, r.Target = listed(r.Source), listed(r.Target)
			x.Facts = append(x.Facts, r)
		}
	}
}
