package neo4jstore_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestConsistency_TokenNamesTheWrites: after a write, the process's token names one
// Neo4j bookmark; another store (another memgate) accepts it and reads with it; and
// a token of this deployment naming a transaction Neo4j has not reached holds a read
// until its deadline, through every way the store reads (a query on its own, a
// transaction of several, the principal's read, made in a group of requests when they
// send no token): the bookmarks reach Neo4j.
func TestConsistency_TokenNamesTheWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	ctx := context.Background()
	one, two := neo4jtest.DB(t), neo4jtest.DB(t)
	mark := uuid.NewString()[:8]
	neo4jtest.Forget(t, mark)
	agent := &graph.Agent{ID: "agent-ct-" + mark, OwnerID: "owner-ct-" + mark, CreatedAt: time.Now()}
	if err := one.CreateAgent(ctx, graph.DefaultOrg, agent, nil); err != nil {
		t.Fatal(err)
	}
	const scope = "\x00owner"
	token, err := one.Token(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	marks, err := one.TokenBookmarks(ctx, token, scope)
	if err != nil || len(marks) != 1 || !strings.HasPrefix(marks[0], "FB:") {
		t.Fatalf("the token names %q (%v), want one Neo4j bookmark", marks, err)
	}
	if strings.Contains(token, strings.TrimPrefix(marks[0], "FB:")[:8]) {
		t.Errorf("the token %q shows its bookmark %q", token, marks[0])
	}
	after, err := two.After(ctx, token, scope)
	if err != nil {
		t.Fatalf("the other store refused the token: %v", err)
	}
	// Made for one requester of one organization, it is refused for any other.
	for _, other := range []string{"\x00another", "acme\x00owner", "", scope + "x"} {
		if _, err := two.After(ctx, token, other); graph.ErrorCode(err) != graph.EINVALID {
			t.Errorf("the token sent for scope %q: %v, want EINVALID", other, err)
		}
	}
	if got, err := two.GetAgent(after, graph.DefaultOrg, agent.ID); err != nil || got.OwnerID != agent.OwnerID {
		t.Fatalf("reading with the token: %+v, %v", got, err)
	}

	// The bookmark with its transaction id made the largest: Neo4j has not reached it.
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(marks[0], "FB:"))
	if err != nil || len(raw) < 20 || raw[0] != 0x91 || raw[1] != 0xCC || raw[2] != 0x10 {
		t.Fatalf("the bookmark %q is not a list of a 16-byte database id and a transaction id: the test must learn its new form", marks[0])
	}
	future := "FB:" + base64.StdEncoding.EncodeToString(append(append([]byte{}, raw[:19]...), 0xCA, 0x7f, 0xff, 0xff, 0xff, 0x90))
	ahead, err := one.SealToken(ctx, []string{future}, scope)
	if err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func(context.Context) error{
		"query": func(ctx context.Context) error {
			_, err := two.GetAgent(ctx, graph.DefaultOrg, agent.ID)
			return err
		},
		"principal": func(ctx context.Context) error { // read in a group when without a token
			_, err := two.ResolvePrincipal(ctx, graph.DefaultOrg, agent.OwnerID)
			return err
		},
		"transaction": func(ctx context.Context) error {
			_, err := two.EraseRequester(ctx, graph.DefaultOrg, "nobody-ct-"+mark, "", true, nil)
			if graph.ErrorCode(err) == graph.ENOTFOUND {
				return nil
			}
			return err
		},
	} {
		if err := read(after); err != nil {
			t.Errorf("%s with the write's token: %v", name, err)
		}
		waiting, err := two.After(ctx, ahead, scope)
		if err != nil {
			t.Fatal(err)
		}
		waiting, cancel := context.WithTimeout(waiting, 2*time.Second)
		err = read(waiting)
		cancel()
		if err == nil || !errors.Is(waiting.Err(), context.DeadlineExceeded) {
			t.Errorf("%s with a token ahead of the database: %v, want it held until its deadline", name, err)
		}
	}
}
