package accesstest

import "slices"

// HTTPOperations are the operations the HTTP tier (handlers' TestMatrix) runs. The
// service tier (service's TestMatrix_Service) runs every operation on the same store
// through the same service calls, so the HTTP tier's part is what HTTP adds: routes,
// status codes, request and answer shapes.
var HTTPOperations = []string{"compact_words", "reflect_words", "move_distilled", "list_agents", "list_agents_all", "list_teams", "list_teams_all", "delegate", "undelegate", "usage",
	"create", "create_fact", "get", "list", "search", "context", "list_entities", "delete", "promote", "promote_team", "update", "move",
	"resolve_conflict", "versions_rule", "dissolve", "copy_dissolve", "move_into_dissolved", "copy_update", "copy_delete", "copy_move",
	"subscribe", "webhook_event", "set_types", "set_team_types"}

// OverHTTP says whether the HTTP tier decides the cell in this build: its operation
// is one of HTTPOperations and its principal is not one make test leaves to the
// service tier (httpSkips).
func OverHTTP(c Cell) bool {
	return slices.Contains(HTTPOperations, c.Operation) && !httpSkips[c.Principal]
}
