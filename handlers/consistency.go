package handlers

import (
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/graph"
)

// ConsistencyHeader carries a consistency token: in the answer to every write that
// succeeded, and back in any later request, which then reads at least as fresh as
// that write (docs/operations.md, read-your-writes).
const ConsistencyHeader = "X-Consistency-Token"

// readYourWrites reads a request's consistency token (400 when it is malformed, sent
// twice, not made by this deployment, or made for another requester) and answers a
// write that succeeded with a fresh one. A token is made for the organization and
// requester the request names (tokenScope) and good for their requests alone. A token
// that cannot be made is logged, never an error: the write is done.
func readYourWrites(c graph.Consistency, log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(ec echo.Context) error {
			r := ec.Request()
			scope := tokenScope(ec)
			switch sent := r.Header.Values(ConsistencyHeader); len(sent) {
			case 0:
			case 1:
				ctx, err := c.After(r.Context(), sent[0], scope)
				if err != nil {
					return err
				}
				ec.SetRequest(r.WithContext(ctx))
			default:
				return graph.Errorf(graph.EINVALID, "send %s once", ConsistencyHeader)
			}
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				res := ec.Response()
				res.Before(func() {
					if res.Status < 200 || res.Status > 299 {
						return
					}
					token, err := c.Token(ec.Request().Context(), scope)
					if err != nil {
						log.WarnContext(ec.Request().Context(), "making a consistency token", "request_id", requestID(ec), "error", err.Error())
						return
					}
					res.Header().Set(ConsistencyHeader, token)
				})
			}
			return next(ec)
		}
	}
}

// tokenScope is what a request's consistency tokens are bound to: the organization and
// the requester it names, as the requester's resolution reads them (after this runs,
// so that it too reads after the token): X-Requester-Org or the host's organization,
// X-Requester-Id or the end user's JWT subject.
func tokenScope(c echo.Context) string {
	host := hostOf(c)
	org := c.Request().Header.Get("X-Requester-Org")
	if org == "" {
		org = string(host.Org)
	}
	requester := c.Request().Header.Get("X-Requester-Id")
	if requester == "" {
		requester = host.Subject
	}
	return org + "\x00" + requester
}
