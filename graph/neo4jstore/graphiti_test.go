package neo4jstore_test

import (
	"context"
	"testing"

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
