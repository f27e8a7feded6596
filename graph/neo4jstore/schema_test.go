package neo4jstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/cypher"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

func TestDB_Migrate(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := neo4jtest.DB(t)

	t.Run("Idempotent", func(t *testing.T) {
		if err := db.Migrate(ctx, neo4jtest.Dimensions); err != nil {
			t.Fatalf("second migration: %v", err)
		}
		if err := db.Ready(ctx); err != nil {
			t.Fatalf("Ready after migration: %v", err)
		}
	})

	// A rolling upgrade: a newer memgate has migrated (a later version is recorded);
	// this older one starting migrates too, and neither lowers the version nor turns
	// unready.
	t.Run("OlderBesideNewer", func(t *testing.T) {
		want := int64(cypher.SchemaVersion())
		setVersion := func(v int64) {
			if err := neo4jtest.Run(neo4jtest.URI(t), "MATCH (s:MemgateSchema {id: 'memgate'}) SET s.version = $v",
				map[string]any{"v": v}); err != nil {
				t.Fatal(err)
			}
		}
		setVersion(want + 1)
		defer setVersion(want)
		if err := db.Migrate(ctx, neo4jtest.Dimensions); err != nil {
			t.Fatal(err)
		}
		if n := neo4jtest.Count(t, "MATCH (s:MemgateSchema {id: 'memgate'}) WHERE s.version = $v RETURN count(s)",
			map[string]any{"v": want + 1}); n != 1 {
			t.Errorf("the older memgate's migration lowered the schema version from %d", want+1)
		}
		if err := db.Ready(ctx); err != nil {
			t.Errorf("Ready beside a newer schema: %v", err)
		}
	})

	t.Run("GraphitiIndexes", func(t *testing.T) {
		got, err := db.IndexNames(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{
			"entity_uuid", "episode_uuid", "relation_uuid", "mention_uuid",
			"entity_group_id", "episode_group_id", "relation_group_id", "mention_group_id",
			"name_entity_index", "created_at_entity_index", "created_at_episodic_index",
			"valid_at_episodic_index", "name_edge_index", "created_at_edge_index",
			"expired_at_edge_index", "valid_at_edge_index", "invalid_at_edge_index",
			"episode_content", "node_name_and_summary", "edge_name_and_fact",
			"entity_name_embedding", "edge_fact_embedding",
		} {
			if !got[name] {
				t.Errorf("index %s is missing; have %v", name, got)
			}
		}
	})

	t.Run("UUIDUnique", func(t *testing.T) {
		err := db.CreateTwoEntitiesWithOneUUID(ctx)
		if graph.ErrorCode(err) == "" {
			t.Fatal("two Entity nodes with one uuid were stored; want a constraint violation")
		}
	})

	t.Run("ErrDimensionMismatch", func(t *testing.T) {
		err := db.Migrate(ctx, neo4jtest.Dimensions+1)
		if graph.ErrorCode(err) != graph.EINVALID {
			t.Fatalf("Migrate with another dimension = %v, want %s", err, graph.EINVALID)
		}
	})
}

// TestDB_MigrateRebuildsEpisodeIndex: an episode_content index created as Graphiti and
// earlier memgates create it (consistent) is rebuilt eventually consistent; a migrated
// one is left alone. It drops and creates the index, so it runs on the private Neo4j:
// on the shared one, every other test's queries would be planned again.
func TestDB_MigrateRebuildsEpisodeIndex(t *testing.T) {
	t.Parallel()
	uri, _ := neo4jtest.Private(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := neo4jtest.Options(t)
	opts.URI = uri
	db, err := neo4jstore.Open(opts, neo4jtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	if err := db.Migrate(ctx, neo4jtest.Dimensions); err != nil {
		t.Fatal(err)
	}
	// 1 when episode_content is online and eventually consistent.
	online := func() int64 {
		return neo4jtest.CountAt(t, uri, "SHOW FULLTEXT INDEXES YIELD name, options, state "+
			"WHERE name = 'episode_content' AND state = 'ONLINE' AND options.indexConfig.`fulltext.eventually_consistent` "+
			"RETURN count(*)", nil)
	}
	if online() != 1 {
		t.Fatal("after Migrate, episode_content is not an online eventually consistent index")
	}
	run := "ftrebuild-" + time.Now().Format("150405.000000")
	space := graph.DefaultOrg.Private("ag-" + run)
	if err := db.CreateAgent(ctx, graph.DefaultOrg, &graph.Agent{ID: space.Agent, OwnerID: "alice-" + run, CreatedAt: time.Now().UTC()}, nil); err != nil {
		t.Fatal(err)
	}
	ep := &graph.Episode{UUID: uuid.NewString(), GroupID: space.GroupID(), AgentID: space.Agent, Source: graph.SourceText,
		Content: "Dana repaints the boathouse.", CreatedAt: time.Now().UTC(), ValidAt: time.Now().UTC(), Status: graph.StatusDone, Name: "note"}
	if res := db.CreateEpisodes(ctx, []*graph.Episode{ep})[0]; res.Err != nil {
		t.Fatal(res.Err)
	}
	if err := neo4jtest.Run(uri, "DROP INDEX episode_content", nil); err != nil {
		t.Fatal(err)
	}
	// Between a rebuild's drop and its creation, episode search (the index plan
	// forced) scores the visible episodes instead of failing.
	hits, err := db.SearchEpisodesPlan(ctx, "boathouse", graph.Visible{GroupIDs: []string{space.GroupID()}}, 10, 0)
	if err != nil || len(hits) != 1 || hits[0].Episode.UUID != ep.UUID {
		t.Errorf("search without episode_content: %d hits, %v; want the one episode", len(hits), err)
	}
	if err := neo4jtest.Run(uri, "CREATE FULLTEXT INDEX episode_content IF NOT EXISTS "+
		"FOR (e:Episodic) ON EACH [e.content, e.source, e.source_description, e.group_id]", nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, neo4jtest.Dimensions); err != nil {
		t.Fatal(err)
	}
	if online() != 1 {
		t.Error("Migrate over a consistent episode_content did not leave it online and eventually consistent")
	}
}

func TestDB_Ready(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("ErrUnavailable", func(t *testing.T) {
		// A port nothing listens on: the reason names Neo4j.
		db, err := neo4jstore.Open(neo4jstore.Options{URI: "bolt://127.0.0.1:1", Database: "neo4j",
			ConnectTimeout: time.Second}, neo4jtest.Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close(ctx)
		err = db.Ready(ctx)
		if graph.ErrorCode(err) != graph.EUNAVAILABLE {
			t.Fatalf("Ready = %v, want %s", err, graph.EUNAVAILABLE)
		}
		if msg := graph.ErrorMessage(err); msg == "" || msg == "internal error" {
			t.Fatalf("Ready message = %q, want a reason", msg)
		}
	})
}

// TestDB_Migrate_Authorship: memories and versions stored before memgate recorded
// content_agent get it at the next start: their agent's for what its owner wrote
// alone, ” for a promoted copy and for one another requester changed; a value
// already set (an erased agent's ”) is left as it is.
func TestDB_Migrate_Authorship(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	ctx := context.Background()
	db := neo4jtest.DB(t)
	run := "backfill-" + time.Now().Format("150405.000000")
	neo4jtest.Forget(t, run)
	group := "team-" + run
	if err := neo4jtest.Run(neo4jtest.URI(t), `UNWIND $rows AS r
		CREATE (e:Episodic {uuid: r.uuid, group_id: $g, agent_id: $agent, requester_id: 'alice', promoted_from: r.from,
		        updated_by: r.by, content: r.uuid})
		FOREACH (x IN CASE WHEN r.set THEN [1] ELSE [] END | SET e.content_agent = '')
		CREATE (e)-[:HAS_VERSION]->(:MemoryVersion {group_id: $g, agent_id: $agent, requester_id: 'alice', promoted_from: '',
		        updated_by: r.by, version: 1})`,
		map[string]any{"g": group, "agent": "ag-" + run, "rows": []map[string]any{
			{"uuid": run + "-own", "from": "", "by": "", "set": false},
			{"uuid": run + "-own-edited", "from": "", "by": "alice", "set": false},
			{"uuid": run + "-copy", "from": "some-original", "by": "", "set": false},
			{"uuid": run + "-theirs", "from": "", "by": "bob", "set": false},
			{"uuid": run + "-erased", "from": "", "by": "", "set": true},
		}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, neo4jtest.Dimensions); err != nil {
		t.Fatal(err)
	}
	count := func(statement, name, agent string) int64 {
		return neo4jtest.Count(t, statement, map[string]any{"id": run + "-" + name, "agent": agent})
	}
	for name, agent := range map[string]string{"own": "ag-" + run, "own-edited": "ag-" + run, "copy": "", "theirs": "", "erased": ""} {
		if count("MATCH (e:Episodic {uuid: $id}) WHERE e.content_agent = $agent RETURN count(e)", name, agent) != 1 {
			t.Errorf("memory %s: content_agent is not %q", name, agent)
		}
	}
	for name, agent := range map[string]string{"own": "ag-" + run, "theirs": ""} { // versions as they record
		if count("MATCH (:Episodic {uuid: $id})-[:HAS_VERSION]->(v) WHERE v.content_agent = $agent RETURN count(v)", name, agent) != 1 {
			t.Errorf("the version of %s: content_agent is not %q", name, agent)
		}
	}
}

// TestDB_Migrate_WebhookFollows: a webhook stored before 014_webhook_follows gets the
// indexed copies of its group_ids at the next start, and the outbox then finds it: a
// memory stored in its agent's public space without extraction (memory.done at once)
// has its delivery.
func TestDB_Migrate_WebhookFollows(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	ctx := context.Background()
	db := neo4jtest.DB(t)
	run := "follows-" + time.Now().Format("150405.000000")
	neo4jtest.Forget(t, run)
	agent := "ag-" + run
	org := graph.DefaultOrg
	if err := db.CreateAgent(ctx, org, &graph.Agent{ID: agent, OwnerID: "alice-" + run, CreatedAt: time.Now().UTC()}, nil); err != nil {
		t.Fatal(err)
	}
	private, public := org.Private(agent).GroupID(), org.Public(agent).GroupID()
	if err := neo4jtest.Run(neo4jtest.URI(t), `CREATE (:Webhook {id: $id, org: '', agent: $agent, requester: $requester,
		url: 'http://127.0.0.1:1/', events: ['memory.done'], group_ids: [$private, $public], status: 'active'})`,
		map[string]any{"id": run, "agent": agent, "requester": "alice-" + run, "private": private, "public": public}); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, neo4jtest.Dimensions); err != nil {
		t.Fatal(err)
	}
	if n := neo4jtest.Count(t, `MATCH (w:Webhook {id: $id}) WHERE w.follow0 = $private AND w.follow1 = $public RETURN count(w)`,
		map[string]any{"id": run, "private": private, "public": public}); n != 1 {
		t.Fatal("the webhook stored before 014 did not get follow0 and follow1")
	}
	ep := &graph.Episode{UUID: uuid.NewString(), GroupID: public, AgentID: agent, Source: graph.SourceText, Content: "A note.",
		CreatedAt: time.Now().UTC(), ValidAt: time.Now().UTC(), Status: graph.StatusDone, Unextracted: true, Name: "A note."}
	if res := db.CreateEpisodes(ctx, []*graph.Episode{ep})[0]; res.Err != nil {
		t.Fatal(res.Err)
	}
	if n := neo4jtest.Count(t, `MATCH (d:WebhookDelivery {webhook_id: $id, subject: $memory, kind: 'memory.done'}) RETURN count(d)`,
		map[string]any{"id": run, "memory": ep.UUID}); n != 1 {
		t.Errorf("%d deliveries of the memory's memory.done to the webhook, want 1", n)
	}
}

// TestDB_Migrate_RewritesTerms: an episode, an entity and a fact stored with the words
// an earlier memgate wrote (no stems) get their search terms again at the first start
// that finds the terms recorded under another rule, and search then finds them by
// another form of a word; a start finding the rule recorded rewrites nothing.
func TestDB_Migrate_RewritesTerms(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	ctx := context.Background()
	db := neo4jtest.DB(t)
	run := "terms-" + time.Now().Format("150405.000000")
	neo4jtest.Forget(t, run)
	group := "agent-" + run + "-private"
	old := " she  was  painting  activities " // words, as stored before stems
	if err := neo4jtest.Run(neo4jtest.URI(t), `
		MATCH (s:MemgateSchema {id: 'memgate'}) REMOVE s.terms
		CREATE (e:Episodic {uuid: $run + '-e', group_id: $g, agent_id: $run, content: 'She was painting activities',
		        content_terms: $old, created_at: datetime(), valid_at: datetime(), status: 'done'})
		CREATE (a:Entity {uuid: $run + '-a', group_id: $g, name: 'Painting activities', summary: '', name_terms: $old})
		CREATE (b:Entity {uuid: $run + '-b', group_id: $g, name: 'Studio', summary: '', name_terms: ' studio '})
		CREATE (a)-[:RELATES_TO {uuid: $run + '-f', group_id: $g, name: 'HELD_AT', fact: 'Painting activities held at the studio',
		        fact_terms: $old, created_at: datetime(), episodes: [$run + '-e']}]->(b)`,
		map[string]any{"run": run, "g": group, "old": old}); err != nil {
		t.Fatal(err)
	}
	vis := graph.Visible{GroupIDs: []string{group}}
	before, err := db.SearchEpisodes(ctx, "what did she paint", vis, graph.SearchFilter{}, 10)
	if err != nil || len(before) != 0 {
		t.Fatalf("before the rewrite: %d found (%v), want none: the stored words are not stems", len(before), err)
	}
	if err := db.Migrate(ctx, neo4jtest.Dimensions); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"MATCH (e:Episodic {uuid: $run + '-e'}) WHERE e.content_terms = $want RETURN count(e)":       " she  was  paint  activ ",
		"MATCH (n:Entity {uuid: $run + '-a'}) WHERE n.name_terms = $want RETURN count(n)":            " paint  activ ",
		"MATCH ()-[r:RELATES_TO {uuid: $run + '-f'}]->() WHERE r.fact_terms = $want RETURN count(r)": " held  at  paint  activ  held  at  the  studio ",
	} {
		if neo4jtest.Count(t, q, map[string]any{"run": run, "want": want}) != 1 {
			t.Errorf("%s: not the stems %q", q, want)
		}
	}
	after, err := db.SearchEpisodes(ctx, "what did she paint", vis, graph.SearchFilter{}, 10)
	if err != nil || len(after) != 1 {
		t.Fatalf("after the rewrite: %d found (%v), want the episode", len(after), err)
	}
	// Recorded: the next start leaves the terms as they are, even ones written otherwise.
	if err := neo4jtest.Run(neo4jtest.URI(t), "MATCH (e:Episodic {uuid: $run + '-e'}) SET e.content_terms = $old",
		map[string]any{"run": run, "old": old}); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, neo4jtest.Dimensions); err != nil {
		t.Fatal(err)
	}
	if neo4jtest.Count(t, "MATCH (e:Episodic {uuid: $run + '-e'}) WHERE e.content_terms = $old RETURN count(e)", map[string]any{"run": run, "old": old}) != 1 {
		t.Errorf("a start with the rule recorded rewrote the terms %q", old)
	}
}
