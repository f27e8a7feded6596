package accesstest_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/memgate/memgate/access/accesstest"
)

// recorder is a testing.TB that keeps the runner's failures instead of failing.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Logf(string, ...any) {}

// tierFunc is a tier made of one function.
type tierFunc func(accesstest.Cell) string

func (f tierFunc) Perform(c accesstest.Cell) string { return f(c) }

// load reads the matrix and its cells.
func load(t *testing.T) (*accesstest.Matrix, []accesstest.Cell) {
	t.Helper()
	m, err := accesstest.Load()
	if err != nil {
		t.Fatal(err)
	}
	cells, err := m.Cells()
	if err != nil {
		t.Fatal(err)
	}
	return m, cells
}

// TestMatrix_Run: every cell is asked for, in order; an undecided cell is neither
// checked nor returned; a wrong outcome fails naming its cell.
func TestMatrix_Run(t *testing.T) {
	m, cells := load(t)
	var asked []accesstest.Cell
	wrong := cells[slices.IndexFunc(cells, func(c accesstest.Cell) bool { return c.Operation == "search" })]
	r := &recorder{TB: t}
	results := accesstest.Run(r, m, tierFunc(func(c accesstest.Cell) string {
		asked = append(asked, c)
		switch {
		case c == wrong:
			return "wrong"
		case c.Operation == "get":
			return accesstest.Undecided
		}
		return c.Want
	}))
	if !slices.Equal(asked, cells) {
		t.Errorf("Run asked for %d cells, want the %d of Cells in order", len(asked), len(cells))
	}
	gets := 0
	for _, c := range cells {
		if c.Operation == "get" {
			gets++
		}
	}
	if len(results) != len(cells)-gets {
		t.Errorf("Run returned %d results, want %d (every cell but the %d undecided)", len(results), len(cells)-gets, gets)
	}
	want := wrong.String() + ": got wrong, want " + wrong.Want
	if len(r.errors) != 1 || r.errors[0] != want {
		t.Errorf("Run failed with %q, want only %q", r.errors, want)
	}
}

// TestOverHTTP_MeetsEveryOutcome: whichever principals the build leaves to the service
// tier, the HTTP tier still meets every outcome of every operation it runs, so each
// route's every answer goes through HTTP in make test too.
func TestOverHTTP_MeetsEveryOutcome(t *testing.T) {
	_, cells := load(t)
	all, overHTTP := map[[2]string]bool{}, map[[2]string]bool{}
	for _, c := range cells {
		if !slices.Contains(accesstest.HTTPOperations, c.Operation) {
			continue
		}
		all[[2]string{c.Operation, c.Want}] = true
		if accesstest.OverHTTP(c) {
			overHTTP[[2]string{c.Operation, c.Want}] = true
		}
	}
	for pair := range all {
		if !overHTTP[pair] {
			t.Errorf("operation %s answers %s to some principal, but to none the HTTP tier runs", pair[0], pair[1])
		}
	}
	if len(all) < 100 {
		t.Fatalf("%d operation-outcome pairs over HTTP; the matrix has more", len(all))
	}
}
