package neo4jstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
)

// TestStoreError: what a lost or refused connection gives, wrapped or not, is
// EUNAVAILABLE (the client retries, a write with its Idempotency-Key), as are
// deadlines; a query's own failure is EINTERNAL; a graph.Error passes as it is.
func TestStoreError(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"Connectivity", &neo4j.ConnectivityError{Inner: errors.New("no route")}, graph.EUNAVAILABLE},
		{"ConnectivityWrapped", fmt.Errorf("claim: %w", &neo4j.ConnectivityError{Inner: errors.New("no route")}), graph.EUNAVAILABLE},
		{"RetriesExhausted", &neo4j.TransactionExecutionLimit{Cause: "timeout"}, graph.EUNAVAILABLE},
		{"EndOfAnswer", io.EOF, graph.EUNAVAILABLE},
		{"CutMidAnswer", fmt.Errorf("reading a record: %w", io.ErrUnexpectedEOF), graph.EUNAVAILABLE},
		{"Reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, graph.EUNAVAILABLE},
		{"ClosedSocket", net.ErrClosed, graph.EUNAVAILABLE},
		{"BrokenPipe", fmt.Errorf("write: %w", syscall.EPIPE), graph.EUNAVAILABLE},
		{"Deadline", context.DeadlineExceeded, graph.EUNAVAILABLE},
		{"SyntaxError", &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError", Msg: "bad"}, graph.EINTERNAL},
		{"Other", errors.New("something else"), graph.EINTERNAL},
		{"GraphError", graph.Errorf(graph.ENOTFOUND, "gone"), graph.ENOTFOUND},
	} {
		if got := graph.ErrorCode(neo4jstore.StoreError(c.err)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
