package neo4jtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// The private Neo4j: one per test process, for the tests that stop and start Neo4j,
// change its schema or need an empty database, so they do not take the shared one
// from the others. A schema change (an index dropped or created) also empties the
// shared Neo4j's plan cache: every query of every test running beside it would be
// planned again, seconds of its CPU each. It is started once, on a port it picks
// itself, and lent to one test at a time, emptied.
var private struct {
	sync.Mutex
	once sync.Once
	env  []string
	uri  string
	dir  string
	err  error
}

// Private lends the private Neo4j to the test until it ends: running, with no data,
// index or constraint. It returns the URI and a function that runs scripts/neo4j-local
// start or stop on it. The test process stops it in TestMain (StopPrivate).
func Private(tb testing.TB) (string, func(action string)) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: go test -short runs the unit tests only")
	}
	private.Lock()
	tb.Cleanup(private.Unlock)
	private.once.Do(func() {
		if private.dir, private.err = os.MkdirTemp("", "memgate-neo4j"); private.err != nil {
			return
		}
		env := append(os.Environ(), "NEO4J_LOCAL_BOLT_PORT=0", "NEO4J_LOCAL_HTTP_PORT=0",
			"NEO4J_LOCAL_DATA="+filepath.Join(private.dir, "neo4j"), "NEO4J_LOCAL_HEAP=512m", "NEO4J_LOCAL_PAGECACHE_MB=64")
		if private.uri, private.err = neo4jLocal(env, "start"); private.err == nil {
			// Later starts bind the port this one picked: memgate reconnects to the same URI.
			private.env = append(env, "NEO4J_LOCAL_BOLT_PORT="+private.uri[strings.LastIndex(private.uri, ":")+1:])
		}
	})
	if private.err != nil {
		tb.Fatal(private.err)
	}
	control := func(action string) {
		tb.Helper()
		if _, err := neo4jLocal(private.env, action); err != nil {
			tb.Fatal(err)
		}
	}
	control("start") // a test before may have left it stopped
	if err := Run(private.uri, "MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS", nil); err != nil {
		tb.Fatalf("emptying the private Neo4j: %v", err)
	}
	dropSchema(tb, private.uri)
	return private.uri, control
}

// StopPrivate stops the private Neo4j, if the process started one, and removes its
// data: TestMain calls it once the package's tests are done.
func StopPrivate() {
	if private.uri == "" {
		return
	}
	if _, err := neo4jLocal(private.env, "stop"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	_ = os.RemoveAll(private.dir)
}

// neo4jLocal runs the repository's scripts/neo4j-local with action, in env, and
// returns what it printed (start: the Bolt URI).
func neo4jLocal(env []string, action string) (string, error) {
	script, err := repoFile("scripts/neo4j-local")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(script, action)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/neo4j-local %s: %v\n%s", action, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// repoFile returns the path of name in the repository, found from the test's
// working directory (its package's) upwards.
func repoFile(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, name), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s: no go.mod above the test's directory", name)
		}
		dir = parent
	}
}

// dropSchema drops every constraint and index but Neo4j's own token lookups. The
// names come from Neo4j itself; schema commands take no parameters.
func dropSchema(tb testing.TB, uri string) {
	tb.Helper()
	driver, err := neo4j.NewDriverWithContext(uri, neo4j.NoAuth())
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	defer driver.Close(ctx)
	// Constraints first: they own some indexes.
	for _, kind := range [][2]string{{"CONSTRAINT", "CONSTRAINTS"}, {"INDEX", "INDEXES"}} {
		res, err := neo4j.ExecuteQuery(ctx, driver, "SHOW "+kind[1]+" YIELD name, type WHERE type <> 'LOOKUP' RETURN name",
			nil, neo4j.EagerResultTransformer)
		if err != nil {
			tb.Fatalf("SHOW %s: %v", kind[1], err)
		}
		for _, r := range res.Records {
			name := strings.ReplaceAll(fmt.Sprint(r.Values[0]), "`", "``")
			if _, err := neo4j.ExecuteQuery(ctx, driver, "DROP "+kind[0]+" `"+name+"` IF EXISTS", nil, neo4j.EagerResultTransformer); err != nil {
				tb.Fatalf("DROP %s %s: %v", kind[0], name, err)
			}
		}
	}
}
