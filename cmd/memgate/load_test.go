package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestLoad_NothingLost writes memories from many writers at once (make test: 10
// writers x 50; make reliability: 50 x 200), each with an Idempotency-Key and every
// tenth sent twice, with searches in between, against a running memgate; then reads
// every writer's memories back: nothing acknowledged is missing, nothing is stored
// twice, nothing is stored that was not acknowledged.
func TestLoad_NothingLost(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	t.Parallel()
	writers, episodes := 10, 500
	if reliability {
		writers, episodes = 50, 10_000
	}
	prefix := "load-" + suffix()
	neo4jtest.Forget(t, prefix)
	srv, base := startBinary(t, map[string]string{"MEMGATE_INGEST_WORKERS": "0", "MEMGATE_SERVER_RATE_LIMIT": "0"})
	defer srv.stop(t)
	res, err := client.Load(context.Background(), base, "", client.LoadOptions{Writers: writers, Episodes: episodes,
		SearchEvery: 10, ResendEvery: 10, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("writes %d (p50 %v, p99 %v), searches %d (p50 %v, p99 %v), errors %v, in %v; "+
		"acknowledged %d, lost %d, duplicates %d, stored unacknowledged %d",
		res.Writes, res.WriteP50.Round(time.Microsecond), res.WriteP99.Round(time.Microsecond), res.Searches,
		res.SearchP50.Round(time.Microsecond), res.SearchP99.Round(time.Microsecond), res.Errors, res.Elapsed.Round(time.Millisecond),
		res.Acknowledged, res.Lost, res.Duplicates, res.Unacknowledged)
	if want := episodes + episodes/10; res.Writes != want || res.Searches == 0 {
		t.Errorf("%d writes and %d searches sent, want %d writes (%d of them again) and some searches", res.Writes, res.Searches, want, episodes/10)
	}
	if len(res.Errors) != 0 {
		t.Errorf("errors %v, want none", res.Errors)
	}
	checkAllOnce(t, res, episodes)
}

// TestLoad_Neo4jRestart takes Neo4j away in the middle of a load for 5 s and gives it
// back: make test cuts the network path to it (neo4jOutage); make reliability stops
// the Neo4j and starts it again, also for 35 s, under a larger load. While it is down memgate
// answers 503, never 500, and /readyz answers 503 with the reason; once it is back,
// /readyz answers 200 without a restart of memgate. The writers send a failed write
// again with its key, so in the end every write is acknowledged once; nothing
// acknowledged is lost and nothing is stored twice; writes succeed again soon after
// Neo4j is back.
func TestLoad_Neo4jRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	uri, down, up := neo4jOutage(t)
	prefix := "restart-" + suffix()
	neo4jtest.Forget(t, prefix)
	srv, base := startBinary(t, map[string]string{"MEMGATE_NEO4J_URI": uri, "MEMGATE_INGEST_WORKERS": "0",
		"MEMGATE_SERVER_RATE_LIMIT": "0", "MEMGATE_NEO4J_CONNECT_TIMEOUT": "2s", "MEMGATE_NEO4J_MAX_RETRY_TIME": "1s"})
	defer srv.stop(t)
	outages, writers, episodes, rate := []time.Duration{5 * time.Second}, 10, 600, 100.0
	if reliability {
		outages, writers, episodes, rate = []time.Duration{5 * time.Second, 35 * time.Second}, 20, 4000, 200
	}
	for i, outage := range outages {
		t.Run(fmt.Sprintf("down-%v", outage), func(t *testing.T) {
			// Each outage's writers and agents are its own: the load creates them.
			res, recovered := underLoad(t, base, client.LoadOptions{Writers: writers, Episodes: episodes, Rate: rate, ResendEvery: 10,
				Retry: 2 * time.Minute, Prefix: fmt.Sprintf("%s-%d", prefix, i)},
				func() time.Time {
					down()
					down := time.Now()
					body := waitStatus(t, base+"/readyz", http.StatusServiceUnavailable, 30*time.Second)
					if !strings.Contains(body, `"code":"unavailable"`) || !strings.Contains(body, "neo4j") {
						t.Errorf("/readyz with Neo4j down: %s, want the reason", body)
					}
					time.Sleep(time.Until(down.Add(outage))) // the rest of the outage, not a wait for a state
					up()
					return time.Now()
				})
			waitStatus(t, base+"/readyz", http.StatusOK, 60*time.Second) // ready again without a restart
			t.Logf("Neo4j down %v; memgate writing again %v after Neo4j was started; writes %d (p50 %v, p99 %v), errors %v; "+
				"acknowledged %d, lost %d, duplicates %d, stored unacknowledged %d", outage,
				recovered.Round(time.Millisecond), res.Writes, res.WriteP50.Round(time.Microsecond), res.WriteP99.Round(time.Microsecond),
				res.Errors, res.Acknowledged, res.Lost, res.Duplicates, res.Unacknowledged)
			for cause, n := range res.Errors {
				if cause != "503" {
					t.Errorf("%d answers were %s; while Neo4j is down memgate answers 503; its errors:\n%s", n, cause, srv.errorLines())
				}
			}
			if res.Errors["503"] == 0 {
				t.Error("no write met the outage: the test did not test anything")
			}
			checkAllOnce(t, res, episodes)
		})
	}
}

// TestLoad_MemgateRestarts kills memgate with kill -9 in the middle of a load
// (make reliability: first stops it with SIGTERM, under a larger load), and starts it
// again on the same address each time. The writers send a failed write again with its
// key: every write ends acknowledged once, nothing acknowledged is lost, nothing is
// stored twice, and no answer is a 500.
func TestLoad_MemgateRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	// Not parallel: memgate is restarted on the port it first bound, which another
	// test's memgate, asking the kernel for any free port, could take while it is down.
	// Its workers ingest this test's agents only: killed, it keeps the leases it holds
	// for two minutes, and other tests' episodes must not be among them.
	signals, writers, episodes, rate := []syscall.Signal{syscall.SIGKILL}, 10, 600, 100.0
	if reliability {
		signals, writers, episodes, rate = []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}, 20, 3000, 150
	}
	prefix := "kill-" + suffix()
	neo4jtest.Forget(t, prefix)
	env := map[string]string{"MEMGATE_SERVER_RATE_LIMIT": "0",
		"MEMGATE_INGEST_WORKERS": "2", "MEMGATE_INGEST_POLL": "50ms", "MEMGATE_INGEST_SCOPE": "agent-" + prefix + "-",
		"MEMGATE_SERVER_ADDR": restartableAddr(t)}
	srv, base := startBinary(t, env)
	parent := t // the restarted memgate outlives each subtest
	for _, signal := range signals {
		t.Run(signal.String(), func(t *testing.T) {
			var down time.Duration
			res, recovered := underLoad(t, base, client.LoadOptions{Writers: writers, Episodes: episodes, Rate: rate, ResendEvery: 10,
				Retry: time.Minute, Prefix: prefix + "-" + signal.String()},
				func() time.Time {
					sent := time.Now()
					if signal == syscall.SIGKILL {
						srv.kill(t)
					} else {
						srv.stop(t) // exit 0, or the test fails with memgate's stderr
					}
					srv, _ = startBinary(parent, env)
					down = time.Since(sent)
					return time.Now()
				})
			t.Logf("memgate %v; signal to ready again %v, first write %v after; writes %d (p50 %v, p99 %v), errors %v; "+
				"acknowledged %d, lost %d, duplicates %d, stored unacknowledged %d", signal, down.Round(time.Millisecond),
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
	srv.stop(t)
}

// underLoad runs a load against base and, once a fifth of its writes are
// acknowledged, fault, which returns when the service was started again. It returns
// the load's result and how long after that start a write first succeeded.
func underLoad(t *testing.T, base string, o client.LoadOptions, fault func() (restarted time.Time)) (*client.LoadResult, time.Duration) {
	t.Helper()
	done := make(chan *client.LoadResult, 1)
	errs := make(chan error, 1)
	underway := make(chan struct{})
	o.Progress = func(acknowledged int) {
		if acknowledged == o.Episodes/5 {
			close(underway)
		}
	}
	go func() {
		res, err := client.Load(context.Background(), base, "", o)
		done <- res
		errs <- err
	}()
	select {
	case <-underway:
	case err := <-errs:
		t.Fatalf("the load ended before a fifth of its writes were acknowledged: %v", err)
	}
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
