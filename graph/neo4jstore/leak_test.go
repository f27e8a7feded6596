package neo4jstore_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestMain fails the package's tests when a goroutine outlives them, and stops the
// private Neo4j.
func TestMain(m *testing.M) {
	code := m.Run()
	neo4jtest.StopPrivate()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
