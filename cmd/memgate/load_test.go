package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memgate/memgate/client"
)

// TestLoad_NothingLost writes 10,000 memories from 50 writers at once, each with an
// Idempotency-Key and every tenth sent twice, with searches in between, against a
// running memgate; then reads every writer's memories back: nothing acknowledged is
// missing, nothing is stored twice, nothing is stored that was not acknowledged.
func TestLoad_NothingLost(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	srv, base := startBinary(t, map[string]string{"MEMGATE_INGEST_WORKERS": "0", "MEMGATE_SERVER_RATE_LIMIT": "0"})
	defer stopBinary(srv)
	res, err := client.Load(context.Background(), base, "", client.LoadOptions{Writers: 50, Episodes: 10_000,
		SearchEvery: 10, ResendEvery: 10, Prefix: fmt.Sprintf("load-%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("writes %d (p50 %v, p99 %v), searches %d (p50 %v, p99 %v), errors %v, in %v; "+
		"acknowledged %d, lost %d, duplicates %d, stored unacknowledged %d",
		res.Writes, res.WriteP50.Round(time.Microsecond), res.WriteP99.Round(time.Microsecond), res.Searches,
		res.SearchP50.Round(time.Microsecond), res.SearchP99.Round(time.Microsecond), res.Errors, res.Elapsed.Round(time.Millisecond),
		res.Acknowledged, res.Lost, res.Duplicates, res.Unacknowledged)
	if res.Writes != 11_000 || res.Searches == 0 {
		t.Errorf("%d writes and %d searches sent, want 11,000 writes (1,000 of them again) and some searches", res.Writes, res.Searches)
	}
	if res.Acknowledged != 10_000 || res.Lost != 0 || res.Duplicates != 0 || res.Unacknowledged != 0 || len(res.Errors) != 0 {
		t.Errorf("acknowledged %d (want 10,000), lost %d, duplicates %d, unacknowledged %d, errors %v",
			res.Acknowledged, res.Lost, res.Duplicates, res.Unacknowledged, res.Errors)
	}
}
