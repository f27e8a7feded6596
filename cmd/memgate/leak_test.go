package main

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestMain fails the package's tests when a goroutine outlives them. The tests' own
// HTTP clients keep idle connections to the memgates they ran; those are closed
// first, since they belong to the tests, not to memgate; the private Neo4j is stopped.
func TestMain(m *testing.M) {
	code := m.Run()
	neo4jtest.StopPrivate()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
