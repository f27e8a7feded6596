package neo4jstore

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

var _ graph.Consistency = (*DB)(nil)

// A consistency token is base64url(HMAC-SHA256(key, payload) || payload), payload the
// JSON list of the Neo4j bookmarks it names. The key is the deployment's (made once,
// kept on the schema node), so a token minted by one replica is good on every other
// and one from elsewhere is refused: a bookmark a client made up could hold every
// read that sends it until Neo4j's bookmark wait runs out.
const maxToken = 2048

type afterKey struct{}

var errToken = graph.Errorf(graph.EINVALID, "consistency token: malformed, or not made by this deployment")

// Token names every write this process has committed: the bookmarks of its
// transactions, consolidated into one by a read that starts after them all when
// there are several (concurrent sessions each leave one).
func (db *DB) Token(ctx context.Context) (string, error) {
	key, err := db.consistencyKey(ctx)
	if err != nil {
		return "", err
	}
	marks, err := db.bookmarks.GetBookmarks(ctx)
	if err != nil {
		return "", db.storeError("bookmarks", err)
	}
	if len(marks) > 1 {
		session := db.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: db.database,
			AccessMode: neo4j.AccessModeRead, Bookmarks: marks})
		_, err := session.ExecuteRead(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
			return db.txRun(ctx, tx, "consistency_latest", nil)
		})
		latest := session.LastBookmarks()
		closeErr := session.Close(context.WithoutCancel(ctx))
		if err = errors.Join(err, closeErr); err != nil {
			return "", db.storeError("consistency_latest", err)
		}
		if err := db.bookmarks.UpdateBookmarks(ctx, marks, latest); err != nil {
			return "", db.storeError("bookmarks", err)
		}
		marks = latest
	}
	payload, err := json.Marshal([]string(marks))
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(append(sign(key, payload), payload...)), nil
}

// After returns ctx with token's bookmarks, which every transaction run with it then
// waits for (run and inTx give them to the driver with the process's own).
func (db *DB) After(ctx context.Context, token string) (context.Context, error) {
	if len(token) > maxToken {
		return nil, errToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) <= sha256.Size {
		return nil, errToken
	}
	key, err := db.consistencyKey(ctx)
	if err != nil {
		return nil, err
	}
	mac, payload := raw[:sha256.Size], raw[sha256.Size:]
	var marks []string
	if !hmac.Equal(mac, sign(key, payload)) || json.Unmarshal(payload, &marks) != nil {
		return nil, errToken
	}
	return context.WithValue(ctx, afterKey{}, marks), nil
}

func sign(key, payload []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(payload)
	return h.Sum(nil)
}

// consistencyKey reads the deployment's key, making it if no memgate has yet, once
// per process.
func (db *DB) consistencyKey(ctx context.Context) ([]byte, error) {
	db.keyMu.Lock()
	defer db.keyMu.Unlock()
	if db.key != nil {
		return db.key, nil
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	records, err := db.run(ctx, neo4j.AccessModeWrite, "consistency_key",
		map[string]any{"key": base64.StdEncoding.EncodeToString(fresh)})
	if err != nil {
		return nil, err
	}
	if len(records) != 1 {
		return nil, graph.Errorf(graph.EINTERNAL, "consistency_key returned %d rows", len(records))
	}
	key, err := base64.StdEncoding.DecodeString(str(records[0].Values[0]))
	if err != nil || len(key) != 32 {
		return nil, graph.Errorf(graph.EINTERNAL, "the deployment's consistency key is not 32 bytes of base64")
	}
	db.key = key
	return key, nil
}

// bookmarksFor is the bookmark manager a transaction run with ctx uses: the
// process's, which every transaction updates (so a token names every write the
// process made), joined with the bookmarks of the token the request sent, if any.
func (db *DB) bookmarksFor(ctx context.Context) neo4j.BookmarkManager {
	if marks, _ := ctx.Value(afterKey{}).([]string); len(marks) > 0 {
		return readAfter{BookmarkManager: db.bookmarks, marks: marks}
	}
	return db.bookmarks
}

// withToken reports whether ctx carries a consistency token's bookmarks (After).
func withToken(ctx context.Context) bool {
	marks, _ := ctx.Value(afterKey{}).([]string)
	return len(marks) > 0
}

// readAfter is the process's bookmark manager, with a token's bookmarks added to
// those every transaction starts after.
type readAfter struct {
	neo4j.BookmarkManager
	marks []string
}

func (r readAfter) GetBookmarks(ctx context.Context) (neo4j.Bookmarks, error) {
	marks, err := r.BookmarkManager.GetBookmarks(ctx)
	return append(append(neo4j.Bookmarks{}, marks...), r.marks...), err
}
