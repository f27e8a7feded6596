package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
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

// TestLoad_Neo4jRestart stops Neo4j in the middle of a load, once for 5 s and once for
// 35 s, and starts it again: while it is down memgate answers 503, never 500; the
// writers send a failed write again with its key, so in the end every write is
// acknowledged once; nothing acknowledged is lost and nothing is stored twice; writes
// succeed again soon after Neo4j is back.
func TestLoad_Neo4jRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	uri, neo4jLocal := privateNeo4j(t)
	srv, base := startBinary(t, map[string]string{"MEMGATE_NEO4J_URI": uri, "MEMGATE_INGEST_WORKERS": "0",
		"MEMGATE_SERVER_RATE_LIMIT": "0", "MEMGATE_NEO4J_CONNECT_TIMEOUT": "2s"})
	defer stopBinary(srv)
	for _, outage := range []time.Duration{5 * time.Second, 35 * time.Second} {
		t.Run(fmt.Sprintf("down-%v", outage), func(t *testing.T) {
			const episodes = 4000
			res, recovered := underLoad(t, base, client.LoadOptions{Writers: 20, Episodes: episodes, Rate: 200, ResendEvery: 10,
				Retry: 2 * time.Minute, Prefix: fmt.Sprintf("restart-%d", time.Now().UnixNano())},
				func() time.Time {
					neo4jLocal("stop")
					time.Sleep(outage)
					neo4jLocal("start")
					return time.Now()
				})
			t.Logf("Neo4j down %v; memgate writing again %v after Neo4j was started; writes %d (p50 %v, p99 %v), errors %v; "+
				"acknowledged %d, lost %d, duplicates %d, stored unacknowledged %d", outage,
				recovered.Round(time.Millisecond), res.Writes, res.WriteP50.Round(time.Microsecond), res.WriteP99.Round(time.Microsecond),
				res.Errors, res.Acknowledged, res.Lost, res.Duplicates, res.Unacknowledged)
			for cause, n := range res.Errors {
				if cause != "503" {
					t.Errorf("%d answers were %s; while Neo4j is down memgate answers 503", n, cause)
				}
			}
			if res.Errors["503"] == 0 {
				t.Error("no write met the outage: the test did not test anything")
			}
			checkAllOnce(t, res, episodes)
		})
	}
}

// TestLoad_MemgateRestarts stops memgate in the middle of a load, first with SIGTERM
// (it finishes what it is serving and exits), then with kill -9, and starts it again
// on the same address each time. The writers send a failed write again with its key:
// every write ends acknowledged once, nothing acknowledged is lost, nothing is
// stored twice, and no answer is a 500.
func TestLoad_MemgateRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	// Not parallel: memgate is restarted on a fixed port, which another test's memgate,
	// asking the kernel for any free port, could take while it is down. Its workers
	// ingest this test's agents only: killed, it keeps the leases it holds for two
	// minutes, and other tests' episodes must not be among them.
	prefix := fmt.Sprintf("kill-%d", time.Now().UnixNano())
	env := map[string]string{"MEMGATE_SERVER_ADDR": fmt.Sprintf("127.0.0.1:%d", freePort(t)), "MEMGATE_SERVER_RATE_LIMIT": "0",
		"MEMGATE_INGEST_WORKERS": "2", "MEMGATE_INGEST_POLL": "50ms", "MEMGATE_INGEST_SCOPE": "agent-" + prefix + "-"}
	srv, base := startBinary(t, env)
	parent := t // the restarted memgate outlives each subtest
	for _, signal := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(signal.String(), func(t *testing.T) {
			const episodes = 3000
			var exit string
			var down time.Duration
			res, recovered := underLoad(t, base, client.LoadOptions{Writers: 20, Episodes: episodes, Rate: 150, ResendEvery: 10,
				Retry: time.Minute, Prefix: prefix + "-" + signal.String()},
				func() time.Time {
					sent := time.Now()
					_ = srv.Process.Signal(signal)
					err := srv.Wait()
					exit = fmt.Sprint(err)
					if signal == syscall.SIGTERM && err != nil {
						t.Errorf("memgate did not exit cleanly on SIGTERM: %v", err)
					}
					srv, _ = startBinary(parent, env)
					down = time.Since(sent)
					return time.Now()
				})
			t.Logf("%v (exit: %s); signal to ready again %v, first write %v after; writes %d (p50 %v, p99 %v), errors %v; "+
				"acknowledged %d, lost %d, duplicates %d, stored unacknowledged %d", signal, exit, down.Round(time.Millisecond),
				recovered.Round(time.Millisecond),
				res.Writes, res.WriteP50.Round(time.Microsecond), res.WriteP99.Round(time.Microsecond), res.Errors,
				res.Acknowledged, res.Lost, res.Duplicates, res.Unacknowledged)
			for cause := range res.Errors {
				if cause != "transport" && cause != "503" {
					t.Errorf("answers %s during a restart: %v", cause, res.Errors)
				}
			}
			checkAllOnce(t, res, episodes)
		})
	}
	stopBinary(srv)
}

// underLoad runs a load against base and, 3 s into it, fault, which returns when the
// service was started again. It returns the load's result and how long after that
// start a write first succeeded.
func underLoad(t *testing.T, base string, o client.LoadOptions, fault func() (restarted time.Time)) (*client.LoadResult, time.Duration) {
	t.Helper()
	done := make(chan *client.LoadResult, 1)
	errs := make(chan error, 1)
	started := make(chan struct{})
	o.Started = func() { close(started) }
	go func() {
		res, err := client.Load(context.Background(), base, "", o)
		done <- res
		errs <- err
	}()
	select {
	case <-started:
	case err := <-errs:
		t.Fatalf("the load did not start: %v", err)
	}
	time.Sleep(3 * time.Second)
	up := fault()
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
	if recovered == 0 {
		t.Error("memgate did not answer again within 60 s")
	}
	return res, recovered
}

// checkAllOnce checks that every one of n writes was acknowledged, is stored, and is
// stored once.
func checkAllOnce(t *testing.T, res *client.LoadResult, n int) {
	t.Helper()
	if res.Acknowledged != n || res.Lost != 0 || res.Duplicates != 0 || res.Unacknowledged != 0 {
		t.Errorf("acknowledged %d of %d, lost %d, duplicates %d, stored unacknowledged %d",
			res.Acknowledged, n, res.Lost, res.Duplicates, res.Unacknowledged)
	}
}
