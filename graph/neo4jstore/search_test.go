package neo4jstore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/extract"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// Both plans of episode search, on the same episodes: the same matches, only from the
// visible set, the better match first.
func TestSearchEpisodes_BothPlans(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	mine, theirs := graph.DefaultOrg.Private("search-a-"+run), graph.DefaultOrg.Private("search-b-"+run)
	for _, s := range []graph.Space{mine, theirs} {
		if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: s.Agent, OwnerID: "owner-" + run, CreatedAt: time.Now()}, nil); err != nil {
			t.Fatal(err)
		}
	}
	write := func(space graph.Space, content string) string {
		now := time.Now().UTC()
		e := &graph.Episode{UUID: uuid.NewString(), GroupID: space.GroupID(), AgentID: space.Agent, Source: graph.SourceText,
			Content: content, CreatedAt: now, ValidAt: now, Status: graph.StatusDone, Name: "search test"}
		if res := db.CreateEpisodes(ctx, []*graph.Episode{e})[0]; res.Err != nil {
			t.Fatal(res.Err)
		}
		return e.UUID
	}
	twice := write(mine, "Coffee with Dana, then more coffee.")
	once := write(mine, "Bought new beans for the office machine, some paper filters and coffee cups too.")
	shouting := write(mine, "COFFEE!")
	write(mine, "The coffeehouse on the corner closed; we met in the garden instead.")
	// The other agent's episodes outscore mine, and there are more of them than the
	// index plan's first candidates: it must ask again for more.
	for range 100 {
		write(theirs, "coffee coffee coffee, the other agent's coffee")
	}
	vis := graph.Visible{GroupIDs: []string{mine.GroupID()}}

	for _, plan := range []struct {
		name     string
		exactMax int
	}{{"index", 0}, {"exact", 1000}} {
		t.Run(plan.name, func(t *testing.T) {
			hits, err := db.SearchEpisodesPlan(ctx, "coffee", vis, 10, plan.exactMax)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, h := range hits {
				if h.Episode.GroupID != mine.GroupID() {
					t.Errorf("hit %s from %s, outside the visible set", h.Episode.UUID, h.Episode.GroupID)
				}
				got[h.Episode.UUID] = h.Score
			}
			if len(got) != 3 || got[twice] == 0 || got[once] == 0 || got[shouting] == 0 {
				t.Fatalf("hits %v, want the three episodes with the word coffee", got)
			}
			if got[twice] <= got[once] {
				t.Errorf("coffee twice in a short episode scored %.3f, once in a long one %.3f", got[twice], got[once])
			}
			for _, q := range []string{"group_id:*", "*", "coffee OR group_id:" + theirs.GroupID(), "\"coffee\""} {
				hits, err := db.SearchEpisodesPlan(ctx, q, vis, 10, plan.exactMax)
				if err != nil {
					t.Fatalf("%q: %v", q, err)
				}
				for _, h := range hits {
					if h.Episode.GroupID != mine.GroupID() {
						t.Errorf("%q found %s in %s", q, h.Episode.UUID, h.Episode.GroupID)
					}
				}
			}
			if hits, err := db.SearchEpisodesPlan(ctx, "coffee", graph.Visible{GroupIDs: []string{}}, 10, plan.exactMax); err != nil || len(hits) != 0 {
				t.Errorf("empty visible set: %d hits, %v", len(hits), err)
			}
		})
	}
}

// The episode fulltext index is eventually consistent (001_graphiti); the index plan
// still finds each memory the moment its write is acknowledged, as the exact plan does.
func TestSearchEpisodes_IndexPlanSeesEachWrite(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	space := graph.DefaultOrg.Private("fresh-" + run)
	if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: space.Agent, OwnerID: "owner-" + run, CreatedAt: time.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	vis := graph.Visible{GroupIDs: []string{space.GroupID()}}
	for i := range 30 {
		word := fmt.Sprintf("marker%s%d", run, i)
		now := time.Now().UTC()
		e := &graph.Episode{UUID: uuid.NewString(), GroupID: space.GroupID(), AgentID: space.Agent, Source: graph.SourceText,
			Content: "Dana parked the car at the " + word + " garage.", CreatedAt: now, ValidAt: now, Status: graph.StatusDone, Name: "fresh"}
		if res := db.CreateEpisodes(ctx, []*graph.Episode{e})[0]; res.Err != nil {
			t.Fatal(res.Err)
		}
		hits, err := db.SearchEpisodesPlan(ctx, word, vis, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0].Episode.UUID != e.UUID {
			t.Fatalf("write %d: the index plan found %d episodes for %q right after the write, want the one written", i, len(hits), word)
		}
	}
}

// TestVectorSearch_VisibleOnly: vector search over facts, entities and memories ranks
// the visible items by their own vectors, whatever other organizations hold: another
// organization's hundreds of copies of the best fact, of the names and of the memory
// (the same text, so the same vector, and near ones) change neither what is found
// nor a score nor a rank, and none of them is found.
func TestVectorSearch_VisibleOnly(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	acmeOrg, globex := graph.Org("va"+run), graph.Org("vb"+run)
	mine, theirs := acmeOrg.Private("vec-"+run), globex.Private("vec-"+run)
	emb := extract.Hashing{Dimensions: neo4jtest.Dimensions}
	now := time.Now().UTC()
	alice, acme := "Alice"+run, "Acme"+run
	write := func(space graph.Space, copies int, texts ...string) {
		t.Helper()
		for n := range copies {
			vectors, _ := emb.Embed(ctx, append([]string{alice, acme}, texts...))
			a := &graph.EntityNode{UUID: uuid.NewString(), Name: alice, GroupID: space.GroupID(), CreatedAt: now, NameEmbedding: vectors[0]}
			b := &graph.EntityNode{UUID: uuid.NewString(), Name: fmt.Sprintf("%s %d", acme, n%3), GroupID: space.GroupID(), CreatedAt: now, NameEmbedding: vectors[1]}
			var facts []*graph.Fact
			for i, text := range texts {
				facts = append(facts, &graph.Fact{UUID: uuid.NewString(), Name: "SAID", Fact: text, SourceUUID: a.UUID,
					TargetUUID: b.UUID, GroupID: space.GroupID(), Episodes: []string{uuid.NewString()}, CreatedAt: now,
					FactEmbedding: vectors[2+i]})
				e := &graph.Episode{UUID: uuid.NewString(), GroupID: space.GroupID(), AgentID: space.Agent, Source: graph.SourceText,
					Content: text, CreatedAt: now, ValidAt: now, Status: graph.StatusDone, Name: "vec", Unextracted: true, Embedding: vectors[2+i]}
				if res := db.CreateEpisodes(ctx, []*graph.Episode{e})[0]; res.Err != nil {
					t.Fatal(res.Err)
				}
			}
			if err := db.SaveGraph(ctx, []*graph.EntityNode{a, b}, facts); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range []graph.Space{mine, theirs} {
		if err := db.CreateAgent(ctx, s.Org, &graph.Agent{ID: s.Agent, OwnerID: "owner-" + run, CreatedAt: now}, nil); err != nil {
			t.Fatal(err)
		}
	}
	best := alice + " works at " + acme + " as an engineer."
	write(mine, 1, best, alice+" left "+acme+" in March.", alice+" lives in Paris near "+acme+".",
		acme+" makes rockets; "+alice+" builds them.", "The weather was grey.")
	q, _ := emb.Embed(ctx, []string{"Where does " + alice + " work as an engineer? At " + acme + "?"})
	vis := graph.Visible{GroupIDs: []string{mine.GroupID()}, Org: acmeOrg}
	ranked := func() string {
		t.Helper()
		facts, err1 := db.FactsByVector(ctx, q[0], vis, graph.SearchFilter{}, 5)
		entities, err2 := db.EntitiesByVector(ctx, q[0], vis, graph.SearchFilter{}, 5)
		episodes, err3 := db.EpisodesByVector(ctx, q[0], vis, graph.SearchFilter{}, 5)
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		if len(facts) != 5 || len(entities) != 2 || len(episodes) != 5 {
			t.Fatalf("%d facts, %d entities, %d memories by vector; want 5, 2 and 5", len(facts), len(entities), len(episodes))
		}
		var b strings.Builder
		for _, h := range facts {
			fmt.Fprintf(&b, "%s %s %.9f; ", h.Fact.UUID, h.Fact.GroupID, h.Score)
		}
		for _, h := range entities {
			fmt.Fprintf(&b, "%s %s %.9f; ", h.Entity.UUID, h.Entity.GroupID, h.Score)
		}
		for _, h := range episodes {
			fmt.Fprintf(&b, "%s %s %.9f; ", h.Episode.UUID, h.Episode.GroupID, h.Score)
		}
		return b.String()
	}
	before := ranked()
	if !strings.Contains(before, mine.GroupID()) {
		t.Fatal("nothing of the visible space found")
	}
	write(theirs, 120, best, best, alice+" works at "+acme+".")
	if after := ranked(); after != before {
		t.Errorf("vector search ranked %s before another organization wrote near copies, %s after", before, after)
	}
}

// SearchSmall answers a small visible set with what each method's own query answers
// (the same hits in the same order, the same scores), in one round trip, and nothing
// of a space outside the set; a visible set too large to score exactly gets nil, for
// the caller to ask each method.
func TestSearchSmall_SameAsEachMethod(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	mine, theirs, big := graph.DefaultOrg.Private("small-a-"+run), graph.DefaultOrg.Public("small-b-"+run), graph.DefaultOrg.Private("small-c-"+run)
	for _, s := range []graph.Space{mine, theirs, big} {
		if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: s.Agent, OwnerID: "owner-" + run, CreatedAt: time.Now()}, nil); err != nil {
			t.Fatal(err)
		}
	}
	emb := extract.Hashing{Dimensions: neo4jtest.Dimensions}
	now := time.Now().UTC()
	alice, acme := "Alice"+run, "Acme"+run
	write := func(space graph.Space, texts ...string) {
		names := []string{alice, acme, "Paris", "chess"}
		vectors, _ := emb.Embed(ctx, append(names, texts...))
		var entities []*graph.EntityNode
		for i, name := range names {
			entities = append(entities, &graph.EntityNode{UUID: uuid.NewString(), Name: name, GroupID: space.GroupID(),
				Summary: name + " of " + space.Agent, CreatedAt: now, NameEmbedding: vectors[i]})
		}
		var facts []*graph.Fact
		for i, text := range texts {
			relation := []string{"WORKS_AT", "LIVES_IN", "LIKES"}[i%3]
			facts = append(facts, &graph.Fact{UUID: uuid.NewString(), Name: relation, Fact: text, SourceUUID: entities[0].UUID,
				TargetUUID: entities[1+i%3].UUID, GroupID: space.GroupID(), Episodes: []string{uuid.NewString()},
				CreatedAt: now, FactEmbedding: vectors[len(names)+i]})
			e := &graph.Episode{UUID: uuid.NewString(), GroupID: space.GroupID(), AgentID: space.Agent, Source: graph.SourceText,
				Content: text, CreatedAt: now, ValidAt: now, Status: graph.StatusDone, Name: "small"}
			if i < 20 {
				if res := db.CreateEpisodes(ctx, []*graph.Episode{e})[0]; res.Err != nil {
					t.Fatal(res.Err)
				}
				// The embedding extraction gives it.
				if err := neo4jtest.Run(neo4jtest.URI(t), `MATCH (e:Episodic {uuid: $id}) SET e.content_embedding = $v`,
					map[string]any{"id": e.UUID, "v": vectors[len(names)+i]}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := db.SaveGraph(ctx, entities, facts); err != nil {
			t.Fatal(err)
		}
	}
	texts := []string{alice + " works at " + acme + " as an engineer.", alice + " lives in Paris near " + acme + ".",
		alice + " plays chess at " + acme + " on Fridays.", alice + " left " + acme + " in March.",
		"The weather in Paris was grey.", alice + " knows Bob from chess club."}
	write(mine, texts...)
	write(theirs, texts...) // the same words and vectors in a space the requester does not see
	many := make([]string, 301)
	for i := range many {
		many[i] = fmt.Sprintf("%s works at %s, fact %d.", alice, acme, i)
	}
	write(big, many...)

	q := "Where does " + alice + " work? " + acme + " in Paris?"
	v, _ := emb.Embed(ctx, []string{q})
	vis := graph.Visible{GroupIDs: []string{mine.GroupID()}}
	all := graph.Retrieval{Text: q, Vector: v[0], Facts: true, Entities: true, Episodes: true}
	for _, filter := range []graph.SearchFilter{{}, {Relations: []string{"WORKS_AT", "LIKES"}}} {
		got, err := db.SearchSmall(ctx, all, vis, filter, 4)
		if err != nil || got == nil {
			t.Fatalf("small visible set: %v, %v", got, err)
		}
		factsByText, err1 := db.FactsByText(ctx, q, vis, filter, 4)
		factsByVector, err2 := db.FactsByVector(ctx, v[0], vis, filter, 4)
		entitiesByText, err3 := db.EntitiesByText(ctx, q, vis, filter, 4)
		entitiesByVector, err4 := db.EntitiesByVector(ctx, v[0], vis, filter, 4)
		episodes, err5 := db.SearchEpisodes(ctx, q, vis, filter, 4)
		episodesByVector, err6 := db.EpisodesByVector(ctx, v[0], vis, filter, 4)
		if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
			t.Fatal(err)
		}
		type hit struct {
			id, group string
			score     float64
		}
		same := func(what string, got, want []hit) {
			t.Helper()
			if len(want) == 0 {
				t.Errorf("%s: each method's query found nothing; the test shows nothing", what)
			}
			if len(got) != len(want) {
				t.Errorf("%s: %d hits, each method's query %d", what, len(got), len(want))
				return
			}
			for i := range got {
				if got[i].group != mine.GroupID() {
					t.Errorf("%s: hit %d from %s, outside the visible set", what, i, got[i].group)
				}
				if got[i].id != want[i].id || math.Abs(got[i].score-want[i].score) > 1e-9 {
					t.Errorf("%s: hit %d is %s (%.6f), each method's query has %s (%.6f)", what, i, got[i].id, got[i].score, want[i].id, want[i].score)
				}
			}
		}
		facts := func(hs []graph.FactHit) (out []hit) {
			for _, h := range hs {
				if filter.Relations != nil && h.Fact.Name == "LIVES_IN" {
					t.Errorf("a %s fact passed the relations filter", h.Fact.Name)
				}
				out = append(out, hit{h.Fact.UUID, h.Fact.GroupID, h.Score})
			}
			return out
		}
		entities := func(hs []graph.EntityHit) (out []hit) {
			for _, h := range hs {
				out = append(out, hit{h.Entity.UUID, h.Entity.GroupID, h.Score})
			}
			return out
		}
		eps := func(hs []graph.ScoredEpisode) (out []hit) {
			for _, h := range hs {
				out = append(out, hit{h.Episode.UUID, h.Episode.GroupID, h.Score})
			}
			return out
		}
		if len(got.Facts) != 2 || len(got.Entities) != 2 || len(got.Episodes) != 2 {
			t.Fatalf("%d fact lists, %d entity lists, %d episode lists; want 2 each", len(got.Facts), len(got.Entities), len(got.Episodes))
		}
		if len(episodesByVector) == 0 {
			t.Fatal("episodes by vector found nothing: the test compares nothing")
		}
		same("facts by text", facts(got.Facts[0]), facts(factsByText))
		same("facts by vector", facts(got.Facts[1]), facts(factsByVector))
		same("entities by text", entities(got.Entities[0]), entities(entitiesByText))
		same("entities by vector", entities(got.Entities[1]), entities(entitiesByVector))
		same("episodes by text", eps(got.Episodes[0]), eps(episodes))
		same("episodes by vector", eps(got.Episodes[1]), eps(episodesByVector))
	}

	// Kinds not asked for and a missing vector leave their lists empty.
	got, err := db.SearchSmall(ctx, graph.Retrieval{Text: q, Facts: true}, vis, graph.SearchFilter{}, 4)
	if err != nil || got == nil {
		t.Fatal(got, err)
	}
	if len(got.Facts[0]) == 0 || len(got.Facts[1])+len(got.Entities[0])+len(got.Entities[1])+len(got.Episodes[0])+len(got.Episodes[1]) != 0 {
		t.Errorf("facts by text only: %d, %d fact hits, %d, %d entity hits, %d, %d episodes",
			len(got.Facts[0]), len(got.Facts[1]), len(got.Entities[0]), len(got.Entities[1]), len(got.Episodes[0]), len(got.Episodes[1]))
	}
	// 301 facts are more than it scores exactly: nil, and the methods' own queries answer.
	if got, err := db.SearchSmall(ctx, all, graph.Visible{GroupIDs: []string{mine.GroupID(), big.GroupID()}}, graph.SearchFilter{}, 4); err != nil || got != nil {
		t.Errorf("307 visible facts: %+v, %v; want nil", got, err)
	}
}

// TestTextSearch_ScoresFromVisibleOnly: no text search score, and no ranking, depends
// on what the requester cannot read. An organization's memories, facts and entities
// are searched for a probe word by both plans (the index plan asks fulltext indexes
// that hold every organization's items); another organization then writes the probe
// word hundreds of times and into longer and shorter texts, and every score and every
// rank of the first organization's search is the same as before. Both plans give the
// same scores.
func TestTextSearch_ScoresFromVisibleOnly(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	probe := "zephyrine" + run
	acme, globex := graph.Org("acme"+run), graph.Org("globex"+run)
	mine, theirs := acme.Private("probe-"+run), globex.Private("probe-"+run)
	for _, s := range []graph.Space{mine, theirs} {
		if err := db.CreateAgent(ctx, s.Org, &graph.Agent{ID: s.Agent, OwnerID: "owner-" + run, CreatedAt: time.Now()}, nil); err != nil {
			t.Fatal(err)
		}
	}
	write := func(space graph.Space, contents ...string) {
		t.Helper()
		var eps []*graph.Episode
		for _, c := range contents {
			now := time.Now().UTC()
			eps = append(eps, &graph.Episode{UUID: uuid.NewString(), GroupID: space.GroupID(), AgentID: space.Agent, Source: graph.SourceText,
				Content: c, CreatedAt: now, ValidAt: now, Status: graph.StatusDone, Name: "probe"})
		}
		for _, res := range db.CreateEpisodes(ctx, eps) {
			if res.Err != nil {
				t.Fatal(res.Err)
			}
		}
	}
	facts := func(space graph.Space, texts ...string) {
		t.Helper()
		now := time.Now().UTC()
		var entities []*graph.EntityNode
		var fs []*graph.Fact
		for i, text := range texts {
			a := &graph.EntityNode{UUID: uuid.NewString(), Name: fmt.Sprintf("Dana %s %d", probe, i), Summary: text, GroupID: space.GroupID(), CreatedAt: now}
			b := &graph.EntityNode{UUID: uuid.NewString(), Name: fmt.Sprintf("Place %d", i), GroupID: space.GroupID(), CreatedAt: now}
			entities = append(entities, a, b)
			fs = append(fs, &graph.Fact{UUID: uuid.NewString(), Name: "VISITED", Fact: text, SourceUUID: a.UUID, TargetUUID: b.UUID,
				GroupID: space.GroupID(), Episodes: []string{uuid.NewString()}, CreatedAt: now})
		}
		if err := db.SaveGraph(ctx, entities, fs); err != nil {
			t.Fatal(err)
		}
	}
	texts := []string{
		"Dana saw the " + probe + " at the harbour.",
		"The " + probe + " came back in the evening, " + probe + " again.",
		"A long note about the garden, the lake, the hills, the road home and once the " + probe + ".",
		"Tea at the harbour with Dana.",
	}
	write(mine, texts...)
	facts(mine, texts...)
	vis := graph.Visible{GroupIDs: []string{mine.GroupID()}, Org: acme}
	query := probe + " harbour"

	type ranked struct {
		ids    []string
		scores []float64
	}
	search := func(exactMax int) map[string]ranked {
		t.Helper()
		out := map[string]ranked{}
		eps, err := db.SearchEpisodesPlan(ctx, query, vis, 10, exactMax)
		if err != nil {
			t.Fatal(err)
		}
		var r ranked
		for _, h := range eps {
			r.ids, r.scores = append(r.ids, h.Episode.UUID), append(r.scores, h.Score)
		}
		out["memories"] = r
		fs, err := db.FactsByTextPlan(ctx, query, vis, 10, exactMax)
		if err != nil {
			t.Fatal(err)
		}
		r = ranked{}
		for _, h := range fs {
			r.ids, r.scores = append(r.ids, h.Fact.UUID), append(r.scores, h.Score)
		}
		out["facts"] = r
		ens, err := db.EntitiesByTextPlan(ctx, query, vis, 10, exactMax)
		if err != nil {
			t.Fatal(err)
		}
		r = ranked{}
		for _, h := range ens {
			r.ids, r.scores = append(r.ids, h.Entity.UUID), append(r.scores, h.Score)
		}
		out["entities"] = r
		return out
	}
	plans := map[string]int{"index": 0, "exact": 1000}
	before := map[string]map[string]ranked{}
	for plan, exactMax := range plans {
		before[plan] = search(exactMax)
		for kind, r := range before[plan] {
			if len(r.ids) < 3 {
				t.Fatalf("%s plan, %s: %d hits for %q, want at least 3", plan, kind, len(r.ids), query)
			}
		}
	}
	for kind := range before["index"] {
		if fmt.Sprint(before["index"][kind]) != fmt.Sprint(before["exact"][kind]) {
			t.Errorf("%s: the index plan ranked %v, the exact plan %v: want the same scores", kind, before["index"][kind], before["exact"][kind])
		}
	}

	// The other organization writes the probe word far more often, in texts long and
	// short, and the words the first one's texts share with it.
	var flood []string
	for i := range 120 {
		flood = append(flood, strings.Repeat(probe+" ", 1+i%3)+"harbour "+strings.Repeat("padding words ", i%7))
	}
	write(theirs, flood...)
	facts(theirs, flood[:60]...)
	for plan, exactMax := range plans {
		after := search(exactMax)
		for kind, r := range after {
			if fmt.Sprint(r) != fmt.Sprint(before[plan][kind]) {
				t.Errorf("%s plan, %s: %v before another organization wrote the probe word, %v after", plan, kind, before[plan][kind], r)
			}
		}
	}
}

// TestVectorSearch_WordlessItems: an entity, a fact and a memory of no words (whose
// vectors are zero: no direction to rank by) are stored without a vector, and those an
// earlier memgate stored with an empty one lose it at start, so vector search over
// their space still ranks the rest, by each method and in one round trip.
func TestVectorSearch_WordlessItems(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := context.Background()
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	space := graph.DefaultOrg.Private("wordless-" + run)
	now := time.Now().UTC()
	if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: space.Agent, OwnerID: "owner-" + run, CreatedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	emb := extract.Hashing{Dimensions: neo4jtest.Dimensions}
	texts := []string{"Alice" + run, "...", "Alice" + run + " plays chess.", "?!"}
	v, _ := emb.Embed(ctx, texts)
	var entities []*graph.EntityNode
	var facts []*graph.Fact
	for i, text := range texts {
		entities = append(entities, &graph.EntityNode{UUID: uuid.NewString(), Name: text, GroupID: space.GroupID(), CreatedAt: now, NameEmbedding: v[i]})
		e := &graph.Episode{UUID: uuid.NewString(), GroupID: space.GroupID(), AgentID: space.Agent, Source: graph.SourceText,
			Content: text, CreatedAt: now, ValidAt: now, Status: graph.StatusDone, Name: "wordless", Unextracted: true, Embedding: v[i]}
		if res := db.CreateEpisodes(ctx, []*graph.Episode{e})[0]; res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	for i, text := range texts {
		facts = append(facts, &graph.Fact{UUID: uuid.NewString(), Name: "SAID", Fact: text, SourceUUID: entities[0].UUID,
			TargetUUID: entities[2].UUID, GroupID: space.GroupID(), Episodes: []string{uuid.NewString()}, CreatedAt: now, FactEmbedding: v[i]})
	}
	if err := db.SaveGraph(ctx, entities, facts); err != nil {
		t.Fatal(err)
	}
	// What an earlier memgate stored for a text of no words: empty lists, which Migrate
	// removes at start.
	if err := neo4jtest.Run(neo4jtest.URI(t), `MATCH (n:Entity {group_id: $g, name: '?!'}) SET n.name_embedding = []
		WITH count(*) AS one MATCH (e:Episodic {group_id: $g, content: '?!'}) SET e.content_embedding = []
		WITH count(*) AS two MATCH ()-[r:RELATES_TO {group_id: $g, fact: '?!'}]->() SET r.fact_embedding = []`,
		map[string]any{"g": space.GroupID()}); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, neo4jtest.Dimensions); err != nil {
		t.Fatal(err)
	}
	q, _ := emb.Embed(ctx, []string{"Does Alice" + run + " play chess?"})
	vis := graph.Visible{GroupIDs: []string{space.GroupID()}}
	f, err1 := db.FactsByVector(ctx, q[0], vis, graph.SearchFilter{}, 10)
	n, err2 := db.EntitiesByVector(ctx, q[0], vis, graph.SearchFilter{}, 10)
	e, err3 := db.EpisodesByVector(ctx, q[0], vis, graph.SearchFilter{}, 10)
	small, err4 := db.SearchSmall(ctx, graph.Retrieval{Vector: q[0], Facts: true, Entities: true, Episodes: true}, vis, graph.SearchFilter{}, 10)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		t.Fatal(err)
	}
	if len(f) != 2 || len(n) != 2 || len(e) != 2 {
		t.Errorf("by each method %d facts, %d entities, %d memories; want the 2 of words of each", len(f), len(n), len(e))
	}
	if small == nil || len(small.Facts) == 0 || len(small.Facts[len(small.Facts)-1]) != 2 ||
		len(small.Entities[len(small.Entities)-1]) != 2 || len(small.Episodes[len(small.Episodes)-1]) != 2 {
		t.Errorf("in one round trip: %+v; want the 2 of words of each kind by vector", small)
	}
}
