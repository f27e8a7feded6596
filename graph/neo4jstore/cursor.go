package neo4jstore

import (
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/memgate/memgate/graph"
)

// A cursor is the sort key of the last row of a page, encoded so clients treat it as
// opaque: (time, id) for the lists newest first, (name, id) for the lists by name. A
// forged cursor can only move within the visible set, since every list query applies
// it as well; a cursor of the other kind is refused.
type cursor struct {
	At   time.Time `json:"t,omitzero"`
	Name *string   `json:"n,omitempty"`
	ID   string    `json:"i"`
}

// maxCursorID and maxCursorName bound what a cursor may carry: ids (uuids, agent ids,
// team names) are short, and names as long as extraction keeps them, with room for
// what other writers of the graph stored.
const (
	maxCursorID   = 100
	maxCursorName = 4096
)

func encodeCursor(at time.Time, id string) string {
	return encode(cursor{At: at.UTC(), ID: id})
}

func encodeNameCursor(name, id string) string {
	return encode(cursor{Name: &name, ID: id})
}

func encode(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads s; ok is false for anything this service did not issue.
func decodeCursor(s string) (c cursor, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	return c, err == nil && c.ID != "" && len(c.ID) <= maxCursorID
}

var errCursor = graph.Errorf(graph.EINVALID, "cursor is not one this service issued")

// cursorParams decodes s, a (time, id) cursor, into the $cursor_at and $cursor_uuid
// parameters.
func cursorParams(s string, params map[string]any) error {
	params["cursor_at"], params["cursor_uuid"] = nil, nil
	if s == "" {
		return nil
	}
	c, ok := decodeCursor(s)
	if !ok || c.At.IsZero() || c.Name != nil {
		return errCursor
	}
	params["cursor_at"], params["cursor_uuid"] = c.At, c.ID
	return nil
}

// nameCursorParams decodes s, a (name, id) cursor, into the $cursor_name and
// $cursor_uuid parameters.
func nameCursorParams(s string, params map[string]any) error {
	params["cursor_name"], params["cursor_uuid"] = nil, nil
	if s == "" {
		return nil
	}
	c, ok := decodeCursor(s)
	if !ok || !c.At.IsZero() || c.Name == nil || len(*c.Name) > maxCursorName {
		return errCursor
	}
	params["cursor_name"], params["cursor_uuid"] = *c.Name, c.ID
	return nil
}
