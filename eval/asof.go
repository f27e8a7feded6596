package main

import (
	"encoding/json"
	"slices"
	"time"
)

// asOfQuestion asks whether a labelled fact holds on a day: one inside its labelled
// interval (holds), one before its stated start or after its known end (does not).
type asOfQuestion struct {
	Source   string `json:"source"`
	Relation string `json:"relation"`
	Target   string `json:"target"`
	At       day    `json:"at"`
	Holds    bool   `json:"holds"`
}

// about reports whether the question asks about the labelled fact want.
func (q asOfQuestion) about(want expectedFact) bool {
	return q.Source == want.Source && q.Relation == want.Relation && q.Target == want.Target
}

// day is a date of the corpus, 2024-01-15, read as its first instant in UTC.
type day struct{ time.Time }

func (d *day) UnmarshalJSON(raw []byte) error {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	t, err := time.Parse(time.DateOnly, s)
	d.Time = t
	return err
}

// holdsAt reports whether a stored fact holds at t as search's as_of decides it
// (cypher/_fact_filter.cypher; TestHoldsAt_SameAsSearch keeps the two together): from
// its start, inclusive, when it has one, to its end, exclusive, when it has one.
func holdsAt(validAt, invalidAt *time.Time, t time.Time) bool {
	return (validAt == nil || !validAt.After(t)) && (invalidAt == nil || invalidAt.After(t))
}

// asOfRight counts the questions the stored facts answer as labelled: outcomes are
// those of facts, in order. A question whose fact is not stored, or names no
// labelled fact, is answered wrong, whether or not the fact should hold.
func asOfRight(questions []asOfQuestion, facts []expectedFact, outcomes []outcome) int {
	right := 0
	for _, q := range questions {
		i := slices.IndexFunc(facts, q.about)
		if i >= 0 && outcomes[i].found && holdsAt(outcomes[i].validAt, outcomes[i].invalidAt, q.At.Time) == q.Holds {
			right++
		}
	}
	return right
}
