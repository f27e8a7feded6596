// Command testdb prepares and checks the test database for make test:
//
//	testdb wipe    erase every node but the schema version (the indexes stay)
//	testdb check   count what the tests left: exit 1 if any episode is still queued or
//	               processing, or any node other than the schema version is left
//
// The database is the one MG_TEST_NEO4J_URI names.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

const wipe = `
MATCH (n) WHERE NOT n:MemgateSchema
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS`

const left = `
MATCH (n) WHERE NOT n:MemgateSchema
RETURN labels(n)[0] AS label, coalesce(n.status, '') AS status, count(*) AS nodes,
       collect(coalesce(n.uuid, n.id, n.name, n.group_id, "") + coalesce(" (org " + n.org + ")", ""))[..3] AS some
ORDER BY label, status`

func main() {
	uri := os.Getenv("MG_TEST_NEO4J_URI")
	if uri == "" || len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: MG_TEST_NEO4J_URI=bolt://... testdb wipe|check")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "wipe":
		if err := neo4jtest.Run(uri, wipe, nil); err != nil {
			fmt.Fprintln(os.Stderr, "testdb wipe:", err)
			os.Exit(1)
		}
	case "check":
		os.Exit(check(uri))
	default:
		fmt.Fprintln(os.Stderr, "testdb: unknown command", os.Args[1])
		os.Exit(2)
	}
}

// check prints what is left in the database and returns the exit code.
func check(uri string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	driver, err := neo4j.NewDriverWithContext(uri, neo4j.NoAuth())
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdb check:", err)
		return 1
	}
	defer driver.Close(ctx)
	res, err := neo4j.ExecuteQuery(ctx, driver, left, nil, neo4j.EagerResultTransformer)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdb check:", err)
		return 1
	}
	if len(res.Records) == 0 {
		fmt.Fprintln(os.Stderr, "test database: nothing left by the tests, no episode queued")
		return 0
	}
	fmt.Fprintln(os.Stderr, "test database: the tests left")
	for _, r := range res.Records {
		fmt.Fprintf(os.Stderr, "  %v %v: %v (%v)\n", r.Values[0], r.Values[1], r.Values[2], r.Values[3])
	}
	return 1
}
