package neo4jstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
)

// TestEpisodes_WrittenByGraphiti: an episode Graphiti's add_episode wrote (its
// properties only: no status, no agent_id) lists and reads as done, with the agent of
// its space, not with empty strings.
func TestEpisodes_WrittenByGraphiti(t *testing.T) {
	db := neo4jtest.DB(t)
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	space := graph.DefaultOrg.Public("graphiti-" + run)
	id := uuid.NewString()
	if err := neo4jtest.Run(neo4jtest.URI(t), `CREATE (:Episodic {uuid: $uuid, name: 'chat', group_id: $group,
		source: 'message', source_description: 'a chat', content: 'user: Alice works at Acme.',
		entity_edges: [], created_at: datetime(), valid_at: datetime()})`,
		map[string]any{"uuid": id, "group": space.GroupID()}); err != nil {
		t.Fatal(err)
	}
	vis := graph.Visible{GroupIDs: []string{space.GroupID()}}
	page, err := db.ListEpisodes(context.Background(), vis, "", graph.PageRequest{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.GetEpisode(context.Background(), id, vis)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Episodes) != 1 || page.Episodes[0].UUID != id {
		t.Fatalf("list: %+v", page.Episodes)
	}
	for _, e := range []*graph.Episode{page.Episodes[0], got} {
		if e.Status != graph.StatusDone || e.AgentID != space.Agent || e.Source != graph.SourceMessage {
			t.Errorf("Graphiti's episode reads as status %q, agent %q, source %q; want done, %s, message",
				e.Status, e.AgentID, e.Source, space.Agent)
		}
	}
}

// TestGraphiti_LoadsTypedEntity: graphiti-core (the version scripts/graphiti-venv
// installs) loads an entity of a declared type and a typed fact from memgate's graph
// with its own loaders (EntityNode.get_by_uuids, EntityEdge.get_by_uuids), without
// error: the type is among the node's labels, and each attribute is in Graphiti's
// attributes with its type (a string, a Neo4j date, a boolean, a float; the edge's
// integer); a generic fact keeps its note. The first run installs graphiti-core into
// .data/graphiti-venv (about a minute); later runs take a few seconds.
func TestGraphiti_LoadsTypedEntity(t *testing.T) {
	db := neo4jtest.DB(t)
	run := uuid.NewString()[:8]
	neo4jtest.Forget(t, run)
	group := graph.DefaultOrg.Private("graphiti-" + run).GroupID()
	now := time.Now().UTC().Truncate(time.Millisecond)
	since := time.Date(2021, 3, 4, 0, 0, 0, 0, time.UTC)
	dana := &graph.EntityNode{UUID: uuid.NewString(), Name: "Dana Reyes", GroupID: group, Type: "Customer", CreatedAt: now}
	dana.State("tier", "silver", now.AddDate(0, -2, 0), "ep-1")
	dana.State("tier", "gold", now, "ep-2")
	dana.State("since", since, now, "ep-2")
	dana.State("vip", true, now, "ep-2")
	router := &graph.EntityNode{UUID: uuid.NewString(), Name: "X200", GroupID: group, Type: "Product", CreatedAt: now,
		Attributes: map[string]any{"price": 129.5, "sku": "X200-EU"}}
	bought := &graph.Fact{UUID: uuid.NewString(), Name: "PURCHASED", Fact: "Dana Reyes bought three X200 routers.",
		SourceUUID: dana.UUID, TargetUUID: router.UUID, GroupID: group, Episodes: []string{"ep-2"}, CreatedAt: now,
		ValidAt: &now, Attributes: map[string]any{"quantity": int64(3)}}
	generic := &graph.Fact{UUID: uuid.NewString(), Name: graph.GenericRelation, Fact: "X200 was sold to Dana Reyes.",
		SourceUUID: router.UUID, TargetUUID: dana.UUID, GroupID: group, Episodes: []string{"ep-2"}, CreatedAt: now,
		ValidAt: &now, Note: "stated as PURCHASED, which joins Customer to Product; here Product to Customer"}
	if err := db.SaveGraph(context.Background(), []*graph.EntityNode{dana, router}, []*graph.Fact{bought, generic}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("..", "..", "scripts", "graphiti-venv"),
		filepath.Join("..", "..", "scripts", "graphiti_load.py"), "--uri", neo4jtest.URI(t),
		"--nodes", dana.UUID, router.UUID, "--edges", bought.UUID, generic.UUID)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("graphiti-core failed to load memgate's typed entity: %v\n%s", err, stderr.String())
	}
	type value struct{ Type, Value string }
	var got struct {
		Nodes []struct {
			UUID, Name, GroupID string
			Labels              []string
			Attributes          map[string]value
		}
		Edges []struct {
			UUID, Name string
			Attributes map[string]value
		}
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Nodes) != 2 || len(got.Edges) != 2 {
		t.Fatalf("graphiti_load answered %s (%v)", out, err)
	}
	want := map[string]map[string]value{
		dana.UUID:    {"tier": {"str", "gold"}, "since": {"Date", "2021-03-04"}, "vip": {"bool", "True"}},
		router.UUID:  {"price": {"float", "129.5"}, "sku": {"str", "X200-EU"}},
		bought.UUID:  {"quantity": {"int", "3"}},
		generic.UUID: {"note": {"str", generic.Note}},
	}
	labels := map[string]string{dana.UUID: "Customer", router.UUID: "Product"}
	for _, n := range got.Nodes {
		if !slices.Contains(n.Labels, labels[n.UUID]) || !slices.Contains(n.Labels, "Entity") {
			t.Errorf("%s: labels %v as Graphiti reads them; want Entity and %s", n.Name, n.Labels, labels[n.UUID])
		}
		for k, v := range want[n.UUID] {
			if n.Attributes[k] != v {
				t.Errorf("%s: Graphiti's attributes[%q] = %+v, want %+v", n.Name, k, n.Attributes[k], v)
			}
		}
		// The earlier tier stays in the history, which Graphiti reads as one more attribute.
		if h := n.Attributes["attribute_history"]; n.UUID == dana.UUID && (h.Type != "list" || !strings.Contains(h.Value, `"silver"`)) {
			t.Errorf("Dana's attribute_history as Graphiti reads it: %+v", h)
		}
	}
	for _, e := range got.Edges {
		for k, v := range want[e.UUID] {
			if e.Attributes[k] != v {
				t.Errorf("edge %s: Graphiti's attributes[%q] = %+v, want %+v", e.Name, k, e.Attributes[k], v)
			}
		}
	}
}
