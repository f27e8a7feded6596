package main

import (
	"context"
	"fmt"
	"strings"
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

// TestLoad_Neo4jRestart stops Neo4j for a few seconds in the middle of a load and
// starts it again: while it is down memgate answers 503, never 500; nothing it
// acknowledged is lost and nothing is stored twice; writes succeed again soon after.
func TestLoad_Neo4jRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	uri, neo4jLocal := privateNeo4j(t)
	srv, base := startBinary(t, map[string]string{"MEMGATE_NEO4J_URI": uri, "MEMGATE_INGEST_WORKERS": "0",
		"MEMGATE_SERVER_RATE_LIMIT": "0", "MEMGATE_NEO4J_CONNECT_TIMEOUT": "2s"})
	defer stopBinary(srv)

	done := make(chan *client.LoadResult, 1)
	errs := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		res, err := client.Load(context.Background(), base, "", client.LoadOptions{Writers: 20, Episodes: 4000,
			Rate: 200, ResendEvery: 10, Prefix: fmt.Sprintf("restart-%d", time.Now().UnixNano()),
			Started: func() { close(started) }})
		done <- res
		errs <- err
	}()
	select {
	case <-started:
	case err := <-errs:
		t.Fatalf("the load did not start: %v", err)
	}
	time.Sleep(3 * time.Second)
	neo4jLocal("stop")
	down := time.Now()
	time.Sleep(5 * time.Second)
	neo4jLocal("start")
	up := time.Now()
	recovered := time.Duration(0)
	probe := client.New(base, "", "restart-probe")
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := probe.Add(context.Background(), client.Memory{AgentID: "restart-probe", Messages: "x"}, ""); err == nil || strings.Contains(err.Error(), "404") {
			recovered = time.Since(up) // the store answers again (the probe's agent does not exist: 404)
			break
		}
	}
	res, err := <-done, <-errs
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Neo4j down %v; memgate answering again %v after Neo4j was started; writes %d (p50 %v, p99 %v), errors %v; "+
		"acknowledged %d, lost %d, duplicates %d, stored unacknowledged %d", up.Sub(down).Round(time.Millisecond),
		recovered.Round(time.Millisecond), res.Writes, res.WriteP50.Round(time.Microsecond), res.WriteP99.Round(time.Microsecond),
		res.Errors, res.Acknowledged, res.Lost, res.Duplicates, res.Unacknowledged)
	if recovered == 0 {
		t.Error("memgate did not answer again within 60 s of Neo4j's start")
	}
	for cause, n := range res.Errors {
		if cause != "503" {
			t.Errorf("%d answers were %s; while Neo4j is down memgate answers 503", n, cause)
		}
	}
	if res.Errors["503"] == 0 {
		t.Error("no write met the outage: the test did not test anything")
	}
	if res.Lost != 0 || res.Duplicates != 0 {
		t.Errorf("lost %d, duplicates %d", res.Lost, res.Duplicates)
	}
}
