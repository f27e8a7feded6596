// Package accesstest loads the authorization matrix of access/testdata/matrix.json,
// which the policy tests and the HTTP tests both run.
package accesstest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Matrix is the world, the principals and the expected outcome of every cell.
type Matrix struct {
	Spaces     []string             `json:"spaces"`
	World      World                `json:"world"`
	Principals map[string]Principal `json:"principals"`
	// Expect[principal][operation] lists one outcome per space, in Spaces order.
	Expect map[string]map[string]string `json:"expect"`
}

type World struct {
	Agents    map[string]string            `json:"agents"` // agent -> owner
	Shares    map[string][]string          `json:"shares"` // agent -> grantees
	Teams     map[string]map[string]string `json:"teams"`  // team -> member -> role
	Promoters []string                     `json:"promoters"`
}

type Principal struct {
	Requester string `json:"requester"`
	Host      string `json:"host"` // trusted, admin or confined
	Agent     string `json:"agent"`
}

// Operations in the order the tests run them.
var Operations = []string{"create", "get", "list", "search", "delete", "promote"}

// Cell is one assertion.
type Cell struct {
	Principal, Operation, Space, Want string
}

// Load reads the matrix from access/testdata.
func Load() (*Matrix, error) {
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "testdata", "matrix.json"))
	if err != nil {
		return nil, err
	}
	var m Matrix
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("matrix.json: %w", err)
	}
	return &m, nil
}

// Cells returns every assertion, failing on a row of the wrong length.
func (m *Matrix) Cells() ([]Cell, error) {
	var cells []Cell
	for name := range m.Principals {
		ops, ok := m.Expect[name]
		if !ok {
			return nil, fmt.Errorf("matrix: no expectations for %s", name)
		}
		for _, op := range Operations {
			row := strings.Fields(ops[op])
			if len(row) != len(m.Spaces) {
				return nil, fmt.Errorf("matrix: %s %s has %d cells, want %d", name, op, len(row), len(m.Spaces))
			}
			for i, want := range row {
				cells = append(cells, Cell{Principal: name, Operation: op, Space: m.Spaces[i], Want: want})
			}
		}
	}
	return cells, nil
}
