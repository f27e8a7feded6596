//go:build reliability

package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/client"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestSoak runs memgate for MG_SOAK (a duration, e.g. 30m; the test is skipped
// without it) at a fixed rate (MG_SOAK_RATE requests a second, default 20) of
// writes and searches from 10 requesters, with ingestion on, and samples memgate's
// resident memory and goroutines from /metrics every 10 s. Memory must stay flat: the
// median of the last tenth of the run within 10 % of the median of the second tenth
// (the first is warm-up). Goroutines must not leak: once the load is over and its work
// has drained, memgate is back within 2 goroutines of its count when idle before the
// load. (During the run the count moves with the work in flight, a goroutine per
// leased episode and per open connection, a few out of some fifteen, so comparing
// medians taken under load measured the work in flight rather than a leak; a leak of
// one goroutine per request or episode would leave thousands after the run.) Errors
// under 0.1 %; nothing lost or stored twice.
func TestSoak(t *testing.T) {
	length, err := time.ParseDuration(os.Getenv("MG_SOAK"))
	if err != nil {
		t.Skip("set MG_SOAK to a duration (e.g. 30m) to run the soak")
	}
	rate := 20.0
	if r, err := strconv.ParseFloat(os.Getenv("MG_SOAK_RATE"), 64); err == nil {
		rate = r
	}
	prefix := "soak-" + suffix()
	neo4jtest.Forget(t, prefix)
	srv, base := startBinary(t, map[string]string{"MEMGATE_INGEST_WORKERS": "2", "MEMGATE_INGEST_SCOPE": "agent-" + prefix})
	defer srv.stop(t)

	before := idleGoroutines(t, base)

	type sample struct{ rss, goroutines float64 }
	var samples []sample
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				m, err := scrape(base + "/metrics")
				if err != nil {
					t.Errorf("scraping /metrics: %v", err)
					return
				}
				samples = append(samples, sample{m["process_resident_memory_bytes"], m["go_goroutines"]})
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), length)
	defer cancel()
	res, err := client.Load(ctx, base, "", client.LoadOptions{Writers: 10, Episodes: int(rate * length.Seconds()), Rate: rate,
		SearchEvery: 5, ResendEvery: 20, Prefix: prefix})
	close(stop)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) < 20 {
		t.Fatalf("%d samples; the soak needs at least 200 s", len(samples))
	}
	tenth := len(samples) / 10
	median := func(part []sample, of func(sample) float64) float64 {
		v := make([]float64, len(part))
		for i, s := range part {
			v[i] = of(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	rss := func(s sample) float64 { return s.rss }
	goroutines := func(s sample) float64 { return s.goroutines }
	early, late := samples[tenth:2*tenth], samples[len(samples)-tenth:]
	rssGrowth := median(late, rss)/median(early, rss) - 1
	var series strings.Builder
	for _, s := range samples {
		fmt.Fprintf(&series, " %.0f", s.goroutines)
	}
	// Leased episodes finish and idle connections close within the two minutes.
	after := idleGoroutines(t, base)
	for deadline := time.Now().Add(2 * time.Minute); after > before+2 && time.Now().Before(deadline); time.Sleep(time.Second) {
		after = idleGoroutines(t, base)
	}
	errors := 0
	for _, n := range res.Errors {
		errors += n
	}
	requests := res.Writes + res.Searches
	t.Logf("soak %v at %.0f/s: %d writes (p50 %v, p99 %v), %d searches (p50 %v, p99 %v), errors %v (%.3f %%); "+
		"RSS %.1f → %.1f MiB (%+.1f %%); goroutines idle %.0f before the load, %.0f after, under load %.0f → %.0f; "+
		"acknowledged %d, lost %d, duplicates %d",
		length, rate, res.Writes, res.WriteP50.Round(time.Microsecond), res.WriteP99.Round(time.Microsecond),
		res.Searches, res.SearchP50.Round(time.Microsecond), res.SearchP99.Round(time.Microsecond), res.Errors,
		100*float64(errors)/float64(requests), median(early, rss)/(1<<20), median(late, rss)/(1<<20), 100*rssGrowth,
		before, after, median(early, goroutines), median(late, goroutines), res.Acknowledged, res.Lost, res.Duplicates)
	t.Logf("goroutines every 10 s:%s", series.String())
	if rssGrowth > 0.10 {
		t.Errorf("memory grew %.1f %%: not flat", 100*rssGrowth)
	}
	if after > before+2 {
		t.Errorf("goroutines leaked: %.0f idle before the load, %.0f two minutes after it", before, after)
	}
	if float64(errors) > 0.001*float64(requests) {
		t.Errorf("%d errors in %d requests", errors, requests)
	}
	if res.Lost != 0 || res.Duplicates != 0 {
		t.Errorf("lost %d, duplicates %d", res.Lost, res.Duplicates)
	}
}

// idleGoroutines is memgate's goroutine count with no connection of this process
// open to it: the pooled connections are closed first, and the count is read on a
// connection of its own.
func idleGoroutines(t *testing.T, base string) float64 {
	t.Helper()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	m, err := scrape(base + "/metrics")
	if err != nil {
		t.Fatalf("scraping /metrics: %v", err)
	}
	return m["go_goroutines"]
}

// scrape reads the unlabelled samples of a Prometheus text exposition.
func scrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		name, value, ok := strings.Cut(s.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out, s.Err()
}
