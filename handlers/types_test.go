package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/neo4jstore/neo4jtest"
	"github.com/memgate/memgate/service"
)

// shopOntology is a deployment's Customer/Product ontology.
var shopOntology = graph.Ontology{
	EntityTypes: []graph.EntityType{{Name: "Customer"}, {Name: "Product"}, {Name: "Supplier"}},
	EdgeTypes: []graph.EdgeType{{Name: "PURCHASED", SourceTypes: []string{"Customer"}, TargetTypes: []string{"Product"}},
		{Name: "SUPPLIES"}},
}

// TestSpaceTypes: an agent's owner, and a team's writer, narrow the deployment's
// types for its space (PUT .../types), stored on the agent or team; never widen them
// (a type the deployment does not declare, or an edge type joining one left out, is
// 400); anyone else is refused: a reader of the team 403, someone who cannot see the
// team 404, another requester than the agent's owner as for any change of the agent;
// null gives the space all of the deployment's types back.
func TestSpaceTypes(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, matrixKeyring(), nil, func(s *service.Service) { s.Ontology = shopOntology })
	w := newTeamWorld(t, srv.URL, "types")
	outsider := w.other
	outsider.requester = strings.Replace(w.other.requester, "-other-", "-outsider-", 1)
	w.admin.must(http.StatusNoContent, "PUT", "/v1/teams/"+w.team+"/members/"+w.other.requester, map[string]any{"role": "reader"}, nil)
	agentTypes, teamTypes := "/v1/agents/"+w.agent+"/types", "/v1/teams/"+w.team+"/types"
	narrow := map[string]any{"entity_types": []string{"Customer", "Product"}, "edge_types": []string{"PURCHASED"}}

	var got map[string]any
	w.owner.must(http.StatusOK, "PUT", agentTypes, narrow, &got)
	if len(got["entity_types"].([]any)) != 2 || len(got["edge_types"].([]any)) != 1 {
		t.Errorf("the answer %v; want the types set", got)
	}
	w.owner.must(http.StatusOK, "PUT", teamTypes, map[string]any{"entity_types": []string{"Supplier"}, "edge_types": []string{}}, nil)
	g := map[string]any{"agent": w.agent, "team": w.team}
	if n := neo4jtest.Count(t, `MATCH (a:Agent {id: $agent}), (t:Team {name: $team})
		WHERE a.entity_types = ['Customer', 'Product'] AND a.edge_types = ['PURCHASED']
		  AND t.entity_types = ['Supplier'] AND t.edge_types = [] RETURN count(*)`, g); n != 1 {
		t.Errorf("the agent's and team's types are not stored as set")
	}
	// The owner reads them back on the agent, a reader of the team on the team; the
	// agent shows another requester no types (nor its shares); each change is audited.
	shown := func(as client, path string) string {
		var v struct{ Types *spaceTypesJSON }
		as.must(http.StatusOK, "GET", path, nil, &v)
		if v.Types == nil {
			return "none"
		}
		return fmt.Sprint(v.Types.EntityTypes, v.Types.EdgeTypes)
	}
	for _, c := range []struct {
		name string
		as   client
		path string
		want string
	}{
		{"OwnerReadsAgent", w.owner, "/v1/agents/" + w.agent, "[Customer Product] [PURCHASED]"},
		{"AdminReadsAgent", w.admin, "/v1/agents/" + w.agent, "[Customer Product] [PURCHASED]"},
		{"OtherReadsAgent", w.other, "/v1/agents/" + w.agent, "none"},
		{"ReaderReadsTeam", w.other, "/v1/teams/" + w.team, "[Supplier] []"},
	} {
		if got := shown(c.as, c.path); got != c.want {
			t.Errorf("%s: types %s, want %s", c.name, got, c.want)
		}
	}
	for subject, want := range map[string]string{w.agent: "entity_types [Customer, Product]; edge_types [PURCHASED]",
		w.team: "entity_types [Supplier]; edge_types []"} {
		if ev := audited(w.owner, "types_changed", subject); len(ev) != 1 || ev[0].Actor != w.owner.requester || ev[0].Reason != want {
			t.Errorf("types_changed events about %s: %+v, want one by %s: %s", subject, ev, w.owner.requester, want)
		}
	}

	for _, c := range []struct {
		name string
		as   client
		path string
		body map[string]any
		want int
	}{
		{"UnknownEntityType", w.owner, agentTypes, map[string]any{"entity_types": []string{"Invoice"}}, http.StatusBadRequest},
		{"UnknownEdgeType", w.owner, agentTypes, map[string]any{"edge_types": []string{"OWES"}}, http.StatusBadRequest},
		{"EdgeJoinsLeftOut", w.owner, agentTypes, map[string]any{"entity_types": []string{"Product"}, "edge_types": []string{"PURCHASED"}}, http.StatusBadRequest},
		{"CaseMatters", w.owner, agentTypes, map[string]any{"entity_types": []string{"customer"}}, http.StatusBadRequest},
		{"UnknownField", w.owner, agentTypes, map[string]any{"types": []string{"Customer"}}, http.StatusBadRequest},
		{"AgentOfAnother", w.other, agentTypes, narrow, http.StatusForbidden},
		{"NoSuchAgent", w.owner, "/v1/agents/no-such-" + w.agent + "/types", narrow, http.StatusNotFound},
		{"TeamReader", w.other, teamTypes, narrow, http.StatusForbidden},
		{"TeamOutsider", outsider, teamTypes, narrow, http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			if status, out := c.as.in(t).do("PUT", c.path, c.body); status != c.want {
				t.Errorf("status %d, want %d: %s", status, c.want, out)
			}
		})
	}
	// Outsiders and malformed bodies: another organization's keys with the same
	// requester, agent and team ids see neither; a body that is not lists of the
	// deployment's names is 400, whoever sends it.
	globex, globexRoot := w.owner, w.admin
	globex.key, globexRoot.key = matrixKeys["globex_trusted"], matrixKeys["globex_admin"]
	many := make([]string, graph.MaxSpaceTypes+1)
	for i := range many {
		many[i] = "Customer"
	}
	for _, c := range []struct {
		name string
		as   client
		path string
		body any
		want int
	}{
		{"OtherOrgAgent", globex, agentTypes, narrow, http.StatusNotFound},
		{"OtherOrgTeam", globex, teamTypes, narrow, http.StatusNotFound},
		{"OtherOrgAdminAgent", globexRoot, agentTypes, narrow, http.StatusNotFound},
		{"OtherOrgAdminTeam", globexRoot, teamTypes, narrow, http.StatusNotFound},
		{"NullName", w.owner, agentTypes, map[string]any{"entity_types": []any{"Customer", nil}}, http.StatusBadRequest},
		{"EmptyName", w.owner, teamTypes, map[string]any{"entity_types": []string{""}}, http.StatusBadRequest},
		{"PaddedName", w.owner, agentTypes, map[string]any{"entity_types": []string{" Customer"}}, http.StatusBadRequest},
		{"EdgeTypeCase", w.owner, agentTypes, map[string]any{"edge_types": []string{"purchased"}}, http.StatusBadRequest},
		{"TooMany", w.owner, agentTypes, map[string]any{"entity_types": many}, http.StatusBadRequest},
		{"NotAList", w.owner, teamTypes, map[string]any{"entity_types": "Customer"}, http.StatusBadRequest},
		{"ListOfObjects", w.owner, teamTypes, map[string]any{"edge_types": []any{map[string]any{"name": "SUPPLIES"}}}, http.StatusBadRequest},
		{"BodyAList", w.owner, agentTypes, []string{"Customer"}, http.StatusBadRequest},
		{"OwnerField", w.owner, agentTypes, map[string]any{"entity_types": []string{"Customer"}, "owner_id": "x"}, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			if status, out := c.as.in(t).sendMalformed("PUT", c.path, c.body); status != c.want {
				t.Errorf("status %d, want %d: %s", status, c.want, out)
			}
		})
	}
	if n := neo4jtest.Count(t, `MATCH (a:Agent {id: $agent}), (t:Team {name: $team})
		WHERE a.entity_types = ['Customer', 'Product'] AND t.entity_types = ['Supplier'] RETURN count(*)`, g); n != 1 {
		t.Errorf("a refused request changed the types")
	}
	// null: all of the deployment's again.
	w.owner.must(http.StatusOK, "PUT", agentTypes, map[string]any{"entity_types": nil}, nil)
	if n := neo4jtest.Count(t, `MATCH (a:Agent {id: $agent}) WHERE a.entity_types IS NULL AND a.edge_types IS NULL RETURN count(a)`, g); n != 1 {
		t.Errorf("null left types on the agent")
	}
	if got := shown(w.owner, "/v1/agents/"+w.agent); got != "none" {
		t.Errorf("after null the agent shows types %s", got)
	}
	if ev := audited(w.owner, "types_changed", w.agent); len(ev) != 2 || ev[0].Reason != "entity_types the deployment's; edge_types the deployment's" {
		t.Errorf("types_changed events about %s after null: %+v, want two, the newest for all of the deployment's", w.agent, ev)
	}
}

// spaceTypesJSON is the types an agent or a team shows.
type spaceTypesJSON struct {
	EntityTypes []string `json:"entity_types"`
	EdgeTypes   []string `json:"edge_types"`
}
