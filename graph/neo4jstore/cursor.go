package neo4jstore

import (
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/memgate/memgate/graph"
)

// A cursor is the sort key of the last row of a page, (time, id), encoded so clients
// treat it as opaque. A forged cursor can only move within the visible set, since
// every list query applies it as well.
type cursor struct {
	At time.Time `json:"t"`
	ID string    `json:"i"`
}

func encodeCursor(at time.Time, id string) string {
	b, _ := json.Marshal(cursor{At: at.UTC(), ID: id})
	return base64.RawURLEncoding.EncodeToString(b)
}

// cursorParams decodes s into the $cursor_at and $cursor_uuid parameters.
func cursorParams(s string, params map[string]any) error {
	params["cursor_at"], params["cursor_uuid"] = nil, nil
	if s == "" {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.At.IsZero() || c.ID == "" || len(c.ID) > 100 {
		return graph.Errorf(graph.EINVALID, "cursor is not one this service issued")
	}
	params["cursor_at"], params["cursor_uuid"] = c.At, c.ID
	return nil
}
