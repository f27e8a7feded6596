package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// requesterErasure is the answer of DELETE /v1/requesters/{id}.
type requesterErasure struct {
	Requester     string `json:"requester"`
	DryRun        bool   `json:"dry_run"`
	Pseudonym     string `json:"pseudonym,omitempty"`
	Agents        int    `json:"agents"`
	Memories      int    `json:"memories"`
	Versions      int    `json:"versions"`
	Entities      int    `json:"entities"`
	Facts         int    `json:"facts"`
	Conflicts     int    `json:"conflicts"`
	Shares        int    `json:"shares"`
	Delegations   int    `json:"delegations"`
	Memberships   int    `json:"memberships"`
	Promoter      bool   `json:"promoter"`
	Teams         int    `json:"teams"`
	Pseudonymized int    `json:"pseudonymized_memories"`
	AuditEvents   int    `json:"audit_events"`
}

// eraseRequester erases a requester, or with ?dry_run=true counts what that would
// erase.
func (a *api) eraseRequester(c echo.Context) error {
	if err := queryParams(c, "dry_run"); err != nil {
		return err
	}
	dryRun, err := queryBool(c, "dry_run")
	if err != nil {
		return err
	}
	e, err := a.svc.EraseRequester(c.Request().Context(), callOf(c), c.Param("id"), dryRun)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, requesterErasure{
		Requester: c.Param("id"), DryRun: dryRun, Pseudonym: e.Pseudonym,
		Agents: e.Agents, Memories: e.Memories, Versions: e.Versions, Entities: e.Entities, Facts: e.Facts,
		Conflicts: e.Conflicts, Shares: e.Shares, Delegations: e.Delegations, Memberships: e.Memberships, Promoter: e.Promoter, Teams: e.Teams,
		Pseudonymized: e.Pseudonymized, AuditEvents: e.AuditEvents,
	})
}
