package main

import (
	"net/http"
	"testing"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestMain fails the package's tests when a goroutine outlives them, and stops the
// private Neo4j. The tests' own HTTP clients keep idle connections to the memgates
// they ran; those are closed first, since they belong to the tests, not to memgate.
func TestMain(m *testing.M) {
	neo4jtest.Main(m, http.DefaultTransport.(*http.Transport).CloseIdleConnections)
}
