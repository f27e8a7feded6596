package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestImport_ProgressFromManyWorkers imports against a fake memgate with many workers:
// the progress callback (which keeps state of its own, as the CLI's does) is never
// called concurrently, so go test -race finds nothing, and the summary adds up.
func TestImport_ProgressFromManyWorkers(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var body struct{ Items []json.RawMessage }
		_ = json.NewDecoder(r.Body).Decode(&body)
		results := make([]map[string]any, len(body.Items))
		for i := range results {
			results[i] = map[string]any{"index": i, "id": fmt.Sprint(calls.Load(), "-", i), "status": "queued"}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"results": results})
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "m.jsonl")
	f, _ := os.Create(path)
	for i := 0; i < 500; i++ {
		fmt.Fprintf(f, `{"agent_id":"a","content":"memory %d"}`+"\n", i)
	}
	f.Close()
	last, updates := 0, 0
	sum, err := Import(context.Background(), New(srv.URL, "", "r"), ImportOptions{Path: path, BatchSize: 5, Workers: 16,
		Progress: func(done, total int) {
			updates++
			if done < last || total != 500 {
				t.Errorf("progress %d of %d after %d", done, total, last)
			}
			last = done
		}})
	if err != nil || sum.Accepted != 500 || sum.Lines != 500 || updates != 100 || last != 500 {
		t.Errorf("summary %+v, %d updates ending at %d, err %v", sum, updates, last, err)
	}
}
