package neo4jstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/cypher"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// The corpus of the search benchmarks: 10,000 episodes over 100 agents (half private,
// half public), written through the store as the API writes them.
const (
	benchAgents   = 100
	benchEpisodes = 10_000
)

var (
	corpusOnce sync.Once
	corpusRun  string
)

var words = strings.Fields(`meeting project deadline customer invoice travel flight hotel
	budget review design database migration release incident outage pager roadmap hiring
	interview lunch coffee birthday vacation doctor dentist gym running marathon recipe
	pasta garden tomatoes weather rain holiday family children school homework piano guitar
	concert museum library book novel chapter author poem music podcast episode garage car`)

func sentence(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = words[r.Intn(len(words))]
	}
	return strings.Join(w, " ")
}

// corpus writes the benchmark corpus once per process and returns its run id.
func corpus(b *testing.B, db *neo4jstore.DB) string {
	corpusOnce.Do(func() {
		corpusRun = uuid.NewString()[:8]
		ctx := context.Background()
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := 0; i < benchAgents; i++ {
			agent := fmt.Sprintf("bench-%s-%03d", corpusRun, i)
			if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: agent, OwnerID: "bench-" + corpusRun, CreatedAt: start}, nil); err != nil {
				b.Fatal(err)
			}
		}
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				r := rand.New(rand.NewSource(int64(w)))
				for i := w; i < benchEpisodes; i += 8 {
					agent := fmt.Sprintf("bench-%s-%03d", corpusRun, i%benchAgents)
					space := graph.DefaultOrg.Public(agent)
					if i%2 == 0 {
						space = graph.DefaultOrg.Private(agent)
					}
					now := time.Now().UTC()
					e := &graph.Episode{UUID: uuid.NewString(), GroupID: space.GroupID(), AgentID: agent,
						Source: graph.SourceText, Content: sentence(r, 12+r.Intn(20)), CreatedAt: now, ValidAt: now,
						Status: graph.StatusDone, Name: "bench"} // a static corpus, not for the ingestion queue
					if res := db.CreateEpisodes(ctx, []*graph.Episode{e})[0]; res.Err != nil {
						errs <- res.Err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatalf("writing the corpus: %v", err)
		}
		b.Logf("corpus of %d episodes over %d agents written in %v", benchEpisodes, benchAgents, time.Since(start))
	})
	return corpusRun
}

// variant is one of the calls a benchmark compares.
type variant struct {
	name string
	call func() error
}

// sideBySide measures the variants in turn, one call of each per iteration (the order
// rotating), so that they meet the same database, caches and background work; it
// reports each variant's p50 and p99 in microseconds as <name>-p50-µs and <name>-p99-µs,
// and returns the p50s by name. Ten seconds of warm-up first let the database's JIT and caches settle (a fresh JVM
// answers several times slower than a warm one).
func sideBySide(b *testing.B, variants ...variant) map[string]time.Duration {
	b.Helper()
	for warm := time.Now(); time.Since(warm) < 10*time.Second; {
		for _, v := range variants {
			if err := v.call(); err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
		}
	}
	d := make([][]time.Duration, len(variants))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range variants {
			v := (i + k) % len(variants)
			start := time.Now()
			if err := variants[v].call(); err != nil {
				b.Fatalf("%s: %v", variants[v].name, err)
			}
			d[v] = append(d[v], time.Since(start))
		}
	}
	b.StopTimer()
	p50 := map[string]time.Duration{}
	for v, ds := range d {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		p50[variants[v].name] = ds[len(ds)/2]
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), variants[v].name+"-p50-µs")
		b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), variants[v].name+"-p99-µs")
	}
	return p50
}

// BenchmarkEpisodeSearch compares, on the same corpus and side by side, the search an
// owner runs over one agent's two spaces (1% of the corpus) and over ten agents'
// spaces (10%) with the same fulltext query and no filter at all (unfiltered). For
// each visible set it runs what memgate chooses and each plan of episode_search forced
// (exact, index).
func BenchmarkEpisodeSearch(b *testing.B) {
	db := neo4jtest.DB(b)
	run := corpus(b, db)
	ctx := context.Background()
	queries := []string{"project deadline", "coffee", "marathon garden", "database migration incident"}
	i := 0
	search := func(agents, exactMax int) func() error {
		var vis graph.Visible
		for a := 0; a < agents; a++ {
			agent := fmt.Sprintf("bench-%s-%03d", run, 42+a)
			vis.GroupIDs = append(vis.GroupIDs, graph.DefaultOrg.Private(agent).GroupID(), graph.DefaultOrg.Public(agent).GroupID())
		}
		return func() error {
			i++
			hits, err := db.SearchEpisodesPlan(ctx, queries[i%len(queries)], vis, 10, exactMax)
			if err == nil && len(hits) == 0 {
				err = fmt.Errorf("no hits")
			}
			return err
		}
	}
	sideBySide(b,
		variant{"unfiltered", func() error {
			i++
			n, err := db.SearchEpisodesUnfiltered(ctx, cypher.LuceneTerms(queries[i%len(queries)]), 10)
			if err == nil && n == 0 {
				err = fmt.Errorf("no hits")
			}
			return err
		}},
		variant{"1-agent", search(1, neo4jstore.ExactSearchMax)},
		variant{"1-agent-exact", search(1, benchEpisodes)},
		variant{"1-agent-index", search(1, 0)},
		variant{"10-agents", search(10, neo4jstore.ExactSearchMax)},
		variant{"10-agents-exact", search(10, benchEpisodes)},
		variant{"10-agents-index", search(10, 0)},
	)
}

// principalBefore is principal_resolve as it was before time-bounded shares (issue 20),
// run beside today's query so the cost of the expiry checks is measured in one run.
const principalBefore = `OPTIONAL MATCH (p:Principal {id: $id})
RETURN coalesce(p.promoter, false) AS promoter,
       COLLECT { MATCH (p)-[m:MEMBER_OF]->(t:Team) RETURN [t.name, m.role] } AS teams,
       COLLECT { MATCH (a:Agent {owner_id: $id}) RETURN a.id } AS owns,
       COLLECT { MATCH (s:Agent)-[:SHARED_WITH]->(p) RETURN s.id } AS shared`

// BenchmarkPrincipal (after the search benchmark, so it meets a warm database)
// measures what every request pays before its work: resolving the
// requester from Neo4j and computing its visible set. The requester owns three agents
// (and so has a shared space), is in two teams and holds three shares: one without an
// end, one until tomorrow and one lapsed.
func ptr[T any](v T) *T { return &v }

func BenchmarkPrincipal(b *testing.B) {
	db := neo4jtest.DB(b)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	requester := "bench-owner-" + run
	root := neo4jtest.AuditEvent(run)
	for i := 0; i < 3; i++ {
		if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: fmt.Sprintf("bench-p-%s-%d", run, i), OwnerID: requester, CreatedAt: time.Now()}, root()); err != nil {
			b.Fatal(err)
		}
	}
	for _, team := range []string{"alpha", "beta"} {
		name := team + "-" + run
		if err := db.CreateTeam(ctx, graph.DefaultOrg, name, "root", root()); err != nil {
			b.Fatal(err)
		}
		if err := db.SetMember(ctx, graph.DefaultOrg, name, requester, graph.RoleWriter, root()); err != nil {
			b.Fatal(err)
		}
	}
	for i, until := range []*time.Time{nil, ptr(time.Now().Add(24 * time.Hour)), ptr(time.Now().Add(time.Second))} {
		other := fmt.Sprintf("bench-s-%s-%d", run, i)
		if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: other, OwnerID: "bench-other-" + run, CreatedAt: time.Now()}, root()); err != nil {
			b.Fatal(err)
		}
		if err := db.SetShare(ctx, graph.DefaultOrg, other, requester, true, until, root()); err != nil {
			b.Fatal(err)
		}
	}
	for { // until the third share has lapsed
		f, err := db.ResolvePrincipal(ctx, graph.DefaultOrg, requester)
		if err != nil {
			b.Fatal(err)
		}
		if len(f.ExpiredShares) == 1 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	before, err := neo4j.NewDriverWithContext(neo4jtest.URI(b), neo4j.NoAuth())
	if err != nil {
		b.Fatal(err)
	}
	defer before.Close(ctx)
	pol := access.Policy{AllowPrivate: true}
	host := access.Host{Name: "bench", Trusted: true}
	sideBySide(b,
		variant{"round-trip-floor", func() error { return db.Ping(ctx) }},
		variant{"resolve-before-issue-20", func() error {
			res, err := neo4j.ExecuteQuery(ctx, before, principalBefore, map[string]any{"id": requester},
				neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase("neo4j"), neo4j.ExecuteQueryWithReadersRouting())
			if err != nil || len(res.Records) != 1 {
				return fmt.Errorf("%v, %d rows", err, len(res.Records))
			}
			return nil
		}},
		variant{"resolve", func() error {
			f, err := db.ResolvePrincipal(ctx, graph.DefaultOrg, requester)
			if err != nil {
				return err
			}
			p := access.NewPrincipal(requester, host, f)
			if v := pol.Visible(p); len(v.GroupIDs) != 12 || !v.Contains(graph.DefaultOrg.Shared(requester).GroupID()) || len(p.ExpiredShares) != 1 {
				return fmt.Errorf("visible set has %d spaces, want 12 (3 agents' 2, 2 shares, 2 teams, the shared space, global); %d lapsed shares, want 1",
					len(v.GroupIDs), len(p.ExpiredShares))
			}
			return nil
		}},
	)
}

// The directory of BenchmarkResolvePrincipal: agents over owners, teams of members,
// share grants (some lapsed), among users who are all principals.
const (
	dirAgents  = 2_000
	dirOwners  = 500 // the requester among them
	dirUsers   = 1_000
	dirTeams   = 200
	dirMembers = 10 // per team
	dirShares  = 1_000
)

// directory writes the directory of BenchmarkResolvePrincipal under run in a few
// batched statements and returns the requester: it owns 10 agents, is a member of 5
// teams and holds 7 shares, 5 live (3 without an end, 2 until next month) and 2
// lapsed. The other users own the other agents (about 4 each), fill the teams and
// hold the other shares, a fifth of them lapsed and a third of the rest time-bounded.
func directory(b *testing.B, run string) string {
	b.Helper()
	r := rand.New(rand.NewSource(1))
	now := time.Now().UTC()
	lapsed, bounded := now.Add(-time.Hour), now.Add(30*24*time.Hour)
	requester := fmt.Sprintf("rp-%s-requester", run)
	user := func(i int) string { return fmt.Sprintf("rp-%s-u%04d", run, i) }
	principals := []map[string]any{{"id": requester}}
	for i := 0; i < dirUsers; i++ {
		principals = append(principals, map[string]any{"id": user(i)})
	}
	owner := map[string]string{} // by agent
	var agents, others []map[string]any
	for i := 0; i < dirAgents; i++ {
		id, o := fmt.Sprintf("rp-%s-a%04d", run, i), requester
		if i >= 10 {
			o = user(i % (dirOwners - 1))
			others = append(others, map[string]any{"id": id})
		}
		owner[id] = o
		agents = append(agents, map[string]any{"id": id, "owner_id": o, "created_at": now})
	}
	var teams, members []map[string]any
	for t := 0; t < dirTeams; t++ {
		name := fmt.Sprintf("rp-%s-t%03d", run, t)
		teams = append(teams, map[string]any{"name": name, "owner_id": user(r.Intn(dirUsers)), "created_at": now})
		in := r.Perm(dirUsers)[:dirMembers]
		for k, u := range in {
			p := user(u)
			if t < 5 && k == 0 {
				p = requester
			}
			members = append(members, map[string]any{"team": name, "principal": p, "role": []string{"reader", "writer"}[r.Intn(2)]})
		}
	}
	var shares []map[string]any
	granted := map[[2]string]bool{}
	share := func(agent, principal string, expires any) {
		granted[[2]string{agent, principal}] = true
		shares = append(shares, map[string]any{"agent": agent, "principal": principal, "granted_at": now, "expires_at": expires})
	}
	for k, expires := range []any{nil, nil, nil, bounded, bounded, lapsed, lapsed} {
		share(others[k*97]["id"].(string), requester, expires)
	}
	for len(shares) < dirShares {
		agent, principal := others[r.Intn(len(others))]["id"].(string), user(r.Intn(dirUsers))
		if principal == owner[agent] || granted[[2]string{agent, principal}] {
			continue
		}
		var expires any
		switch k := r.Intn(10); {
		case k < 2:
			expires = lapsed
		case k < 5:
			expires = bounded
		}
		share(agent, principal, expires)
	}
	uri := neo4jtest.URI(b)
	for _, w := range []struct {
		statement string
		rows      []map[string]any
	}{
		{`UNWIND $rows AS r CREATE (:Principal {org: '', id: r.id, promoter: false})`, principals},
		{`UNWIND $rows AS r CREATE (:Agent {org: '', id: r.id, owner_id: r.owner_id, created_at: r.created_at})`, agents},
		{`UNWIND $rows AS r CREATE (:Team {org: '', name: r.name, owner_id: r.owner_id, created_at: r.created_at})`, teams},
		{`UNWIND $rows AS r MATCH (p:Principal {org: '', id: r.principal}), (t:Team {org: '', name: r.team})
		  CREATE (p)-[:MEMBER_OF {role: r.role}]->(t)`, members},
		{`UNWIND $rows AS r MATCH (a:Agent {org: '', id: r.agent}), (p:Principal {org: '', id: r.principal})
		  CREATE (a)-[:SHARED_WITH {granted_at: r.granted_at, expires_at: r.expires_at}]->(p)`, shares},
	} {
		if err := neo4jtest.Run(uri, w.statement, map[string]any{"rows": w.rows}); err != nil {
			b.Fatalf("writing the directory: %v", err)
		}
	}
	return requester
}

// BenchmarkResolvePrincipal measures principal resolution (principal_resolve), the
// query every request runs first, in a directory of 2,000 agents over 500 owners,
// 200 teams of 10 and 1,000 shares (directory says how they fall): for a requester
// with 10 agents, 5 teams, 5 live shares and 2 lapsed (known), and for one the
// directory does not hold (unknown), by 1 and by 16 concurrent callers. Each
// resolution is timed on its own; the benchmark reports their p50 and p99 in
// milliseconds and the resolutions per second. The directory is written in batches
// and erased when the benchmark ends.
func BenchmarkResolvePrincipal(b *testing.B) {
	db := neo4jtest.DB(b)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(b, run)
	start := time.Now()
	requester := directory(b, run)
	b.Logf("directory written in %v", time.Since(start).Round(time.Millisecond))
	resolve := map[string]func() error{
		"known": func() error {
			f, err := db.ResolvePrincipal(ctx, graph.DefaultOrg, requester)
			if err == nil && (len(f.Owns) != 10 || len(f.Teams) != 5 || len(f.SharedWith) != 5 || len(f.ExpiredShares) != 2) {
				err = fmt.Errorf("%d agents, %d teams, %d shares, %d lapsed; want 10, 5, 5, 2",
					len(f.Owns), len(f.Teams), len(f.SharedWith), len(f.ExpiredShares))
			}
			return err
		},
		"unknown": func() error {
			f, err := db.ResolvePrincipal(ctx, graph.DefaultOrg, "rp-"+run+"-unknown")
			if err == nil && (f.Promoter || len(f.Owns)+len(f.Teams)+len(f.SharedWith)+len(f.ExpiredShares) != 0) {
				err = fmt.Errorf("an unknown requester resolved to %+v", f)
			}
			return err
		},
	}
	// Ten seconds of both at 16 callers first: the JIT, the caches and a full pool.
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for warm := time.Now(); time.Since(warm) < 10*time.Second && errs[w] == nil; {
				errs[w] = errors.Join(resolve["known"](), resolve["unknown"]())
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	for _, who := range []string{"known", "unknown"} {
		id := requester
		if who == "unknown" {
			id = "rp-" + run + "-unknown"
		}
		b.Logf("%s: principal_resolve reads %d db hits", who, profileHits(b, "principal_resolve",
			map[string]any{"requests": []any{map[string]any{"i": int64(0), "org": "", "id": id, "asserted": []string{}}}}))
		for _, callers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/callers-%d", who, callers), func(b *testing.B) { resolutions(b, callers, resolve[who]) })
		}
	}
}

// resolutions makes b.N calls over callers goroutines (caller c makes calls c,
// c+callers, ...), times each, and reports their p50 and p99 in milliseconds and the
// calls per second.
func resolutions(b *testing.B, callers int, call func() error) {
	took := make([]time.Duration, b.N)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := c; n < b.N && errs[c] == nil; n += callers {
				t := time.Now()
				errs[c] = call()
				took[n] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(took[len(took)/2]), "p50_ms")
	b.ReportMetric(ms(took[len(took)*99/100]), "p99_ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "resolutions/s")
}

// profileHits runs the named query under PROFILE and sums the db hits of its plan:
// the work Neo4j does for it, apart from the machine's speed and load.
func profileHits(b *testing.B, name string, params map[string]any) int64 {
	b.Helper()
	q, err := cypher.Load(name)
	if err != nil {
		b.Fatal(err)
	}
	driver, err := neo4j.NewDriverWithContext(neo4jtest.URI(b), neo4j.NoAuth())
	if err != nil {
		b.Fatal(err)
	}
	defer driver.Close(context.Background())
	res, err := neo4j.ExecuteQuery(context.Background(), driver, "PROFILE "+q.Get(name), params, neo4j.EagerResultTransformer)
	if err != nil {
		b.Fatal(err)
	}
	var sum func(p neo4j.ProfiledPlan) int64
	sum = func(p neo4j.ProfiledPlan) int64 {
		n := p.DbHits()
		for _, c := range p.Children() {
			n += sum(c)
		}
		return n
	}
	return sum(res.Summary.Profile())
}
