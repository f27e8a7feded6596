package neo4jstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
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

// A consistency token is base64url(nonce || AES-256-GCM(payload)), payload the JSON
// list of the Neo4j bookmarks it names, sealed with a key derived from the
// deployment's (made once, kept on the schema node) and with the scope it was made for
// (an organization and a requester) as the authenticated data. So a token minted by
// one replica is good on every other; one from elsewhere, changed, or sent by another
// requester or organization is refused (a bookmark a client made up could hold every
// read that sends it until Neo4j's bookmark wait runs out); and what it names (the
// store's id, the database's transaction count, which would tell one tenant another's
// write rate) is never shown.
const maxToken = 2048

type afterKey struct{}

var errToken = graph.Errorf(graph.EINVALID, "consistency token: malformed, not made by this deployment, or made for another requester")

// Token names every write this process has committed, for scope: the bookmarks of its
// transactions, consolidated into one by a read that starts after them all when
// there are several (concurrent sessions each leave one).
func (db *DB) Token(ctx context.Context, scope string) (string, error) {
	aead, err := db.tokenSeal(ctx)
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
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, payload, []byte(scope))), nil
}

// After returns ctx with the bookmarks of token, made for scope, which every
// transaction run with it then waits for (run and inTx give them to the driver with
// the process's own).
func (db *DB) After(ctx context.Context, token, scope string) (context.Context, error) {
	if len(token) > maxToken {
		return nil, errToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, errToken
	}
	aead, err := db.tokenSeal(ctx)
	if err != nil {
		return nil, err
	}
	if len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, errToken
	}
	payload, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(scope))
	var marks []string
	if err != nil || json.Unmarshal(payload, &marks) != nil {
		return nil, errToken
	}
	return context.WithValue(ctx, afterKey{}, marks), nil
}

// tokenSeal is the AEAD consistency tokens are sealed with: AES-256-GCM under
// HMAC-SHA256(the deployment's key, a label), so the stored key itself seals nothing.
func (db *DB) tokenSeal(ctx context.Context) (cipher.AEAD, error) {
	key, err := db.consistencyKey(ctx)
	if err != nil {
		return nil, err
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte("memgate consistency token seal"))
	block, err := aes.NewCipher(h.Sum(nil))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
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
