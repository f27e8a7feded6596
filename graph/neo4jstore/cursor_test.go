package neo4jstore

import (
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
)

// TestCursor_Kinds: each list takes back the cursors of its kind, (time, id) or (name,
// id), and refuses the other kind and anything it did not issue, with EINVALID.
func TestCursor_Kinds(t *testing.T) {
	at := time.Date(2024, 3, 1, 12, 0, 0, 5, time.UTC)
	byTime, byName, emptyName := encodeCursor(at, "id-1"), encodeNameCursor("alice é", "id-2"), encodeNameCursor("", "id-3")
	params := map[string]any{}
	if err := cursorParams(byTime, params); err != nil || !params["cursor_at"].(time.Time).Equal(at) || params["cursor_uuid"] != "id-1" {
		t.Errorf("time cursor: %v %v", err, params)
	}
	if err := nameCursorParams(byName, params); err != nil || params["cursor_name"] != "alice é" || params["cursor_uuid"] != "id-2" {
		t.Errorf("name cursor: %v %v", err, params)
	}
	if err := nameCursorParams(emptyName, params); err != nil || params["cursor_name"] != "" {
		t.Errorf("empty name cursor: %v %v", err, params)
	}
	if err := nameCursorParams("", params); err != nil || params["cursor_name"] != nil || params["cursor_uuid"] != nil {
		t.Errorf("no cursor: %v %v", err, params)
	}
	for _, bad := range []string{"garbage", "e30", encode(cursor{ID: "x"}), encode(cursor{At: at}), encode(cursor{At: at, ID: string(make([]byte, 101))})} {
		for name, decode := range map[string]func(string, map[string]any) error{"time": cursorParams, "name": nameCursorParams} {
			if err := decode(bad, params); graph.ErrorCode(err) != graph.EINVALID {
				t.Errorf("%s list took cursor %q: %v", name, bad, err)
			}
		}
	}
	if err := cursorParams(byName, params); graph.ErrorCode(err) != graph.EINVALID {
		t.Errorf("a time list took a name cursor: %v", err)
	}
	if err := nameCursorParams(byTime, params); graph.ErrorCode(err) != graph.EINVALID {
		t.Errorf("a name list took a time cursor: %v", err)
	}
}
