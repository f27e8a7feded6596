package accesstest

import "testing"

// A Tier is one layer of memgate that the matrix runs through: the pure policy, the
// service on the real store, the HTTP API. It builds the matrix's world before Run.
type Tier interface {
	// Perform does the cell's operation as the cell's principal on the cell's column
	// and says what happened in the matrix's words (allow, 404, found, ...), in words
	// of its own when what happened has none there, or Undecided. Cells come in the
	// order of Cells, so a cell may count on the ones before it having run. A tier
	// reads Want only to say Undecided of an outcome another tier decides.
	Perform(cell Cell) string
}

// Undecided is what a tier says of a cell it does not decide: an operation it does
// not have, or an outcome that only a layer below it decides.
const Undecided = ""

// Result is a cell a tier performed and what it got.
type Result struct {
	Cell
	Got string
}

// Run walks every cell of m in the order of Cells, has tier perform each, and fails t
// on each outcome that is not the cell's. It returns the cells the tier performed, for
// the checks the tier makes after them.
func Run(t testing.TB, m *Matrix, tier Tier) []Result {
	t.Helper()
	cells, err := m.Cells()
	if err != nil {
		t.Fatal(err)
	}
	var results []Result
	tally := map[string]int{}
	for _, c := range cells {
		got := tier.Perform(c)
		if got == Undecided {
			continue
		}
		results = append(results, Result{Cell: c, Got: got})
		tally[got]++
		if got != c.Want {
			t.Errorf("%s: got %s, want %s", c, got, c.Want)
		}
	}
	if len(results) == 0 {
		t.Fatal("no cell of the matrix was performed")
	}
	t.Logf("%d cells performed, %d undecided here: %v", len(results), len(cells)-len(results), tally)
	return results
}

// Actor is a requester of one organization, as the world names it, and the admin host
// of that organization, which lists its audit events.
type Actor struct {
	Requester, AdminHost string
}

// Forbidden counts the 403 outcomes of results by the requester of their principal in
// its organization (the same requester id in two organizations is two requesters).
func (m *Matrix) Forbidden(results []Result) map[Actor]int {
	n := map[Actor]int{}
	for _, r := range results {
		if r.Got == "403" {
			p := m.Principals[r.Principal]
			n[Actor{Requester: p.Requester, AdminHost: p.AdminHost()}]++
		}
	}
	return n
}
