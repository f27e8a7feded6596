package neo4jstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestPlans_ReplanSkipUsesIndexes: a query that keeps the plan Neo4j made first
// (CYPHER replan=skip) must not depend on the statistics of that moment, when the
// store may have been empty. Planned afresh, none of its steps scans a whole label, a
// relationship type or an index; and the queries that planned slowest on the request
// path keep their plans (docs/architecture.md, "Plans kept").
func TestPlans_ReplanSkipUsesIndexes(t *testing.T) {
	db := neo4jtest.DB(t)
	plans, err := db.KeptPlans(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"search_small", "principal_resolve", "agent_get"} {
		if len(plans[name]) == 0 {
			t.Errorf("%s does not keep its plan", name)
		}
	}
	for name, steps := range plans {
		for _, step := range steps {
			if strings.Contains(step, "Scan") {
				t.Errorf("%s keeps its first plan, but planned now it scans: %s\nplan: %s", name, step, strings.Join(steps, "\n  "))
			}
		}
	}
}
