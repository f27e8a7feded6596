package neo4jstore_test

import (
	"testing"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestMain fails the package's tests when a goroutine outlives them, and stops the
// private Neo4j.
func TestMain(m *testing.M) { neo4jtest.Main(m) }
