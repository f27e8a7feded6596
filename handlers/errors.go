package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/graph"
)

// statusOf maps each domain error code to its HTTP status: the one place codes meet
// HTTP.
var statusOf = map[string]int{
	graph.EINVALID:         http.StatusBadRequest,
	graph.EUNPROCESSABLE:   http.StatusUnprocessableEntity,
	graph.ENOTFOUND:        http.StatusNotFound,
	graph.ECONFLICT:        http.StatusConflict,
	graph.EPRECONDITION:    http.StatusPreconditionFailed,
	graph.EUNAUTHENTICATED: http.StatusUnauthorized,
	graph.EFORBIDDEN:       http.StatusForbidden,
	graph.ETOOLARGE:        http.StatusRequestEntityTooLarge,
	graph.ERATELIMITED:     http.StatusTooManyRequests,
	graph.EQUOTA:           http.StatusTooManyRequests,
	graph.EUNAVAILABLE:     http.StatusServiceUnavailable,
	graph.EINTERNAL:        http.StatusInternalServerError,
}

// ErrorBody is the one shape of every error memgate answers.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

type ErrorDetail struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

// errorHandler writes err in the one error shape. Internal errors are logged in full
// and reach the client as "internal error".
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		status, code, message := classify(err)
		if code == graph.EINTERNAL {
			log.ErrorContext(c.Request().Context(), "internal error",
				"request_id", requestID(c), "route", c.Path(), "error", err.Error())
		}
		if code == graph.EUNAUTHENTICATED {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="memgate"`)
		}
		var ge *graph.Error
		if errors.As(err, &ge) && ge.RetryAfter > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(ge.RetryAfter.Round(time.Second)/time.Second)))
		}
		body := ErrorBody{Error: ErrorDetail{Code: code, Message: message, RequestID: requestID(c)}}
		if c.Request().Method == http.MethodHead {
			err = c.NoContent(status)
		} else {
			err = c.JSON(status, body)
		}
		if err != nil {
			log.ErrorContext(c.Request().Context(), "writing error response", "request_id", requestID(c), "error", err.Error())
		}
	}
}

// classify returns the status, code and client-safe message of err.
func classify(err error) (int, string, string) {
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he):
		// Errors echo raises itself: unknown route, wrong method, body over the limit.
		code := codeOfStatus(he.Code)
		message := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && he.Code < 500 {
			message = m
		}
		return he.Code, code, message
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, graph.EUNAVAILABLE, "the request took too long; retry later"
	}
	code := graph.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		status, code = http.StatusInternalServerError, graph.EINTERNAL
	}
	return status, code, graph.ErrorMessage(err)
}

func codeOfStatus(status int) string {
	for code, s := range statusOf {
		if s == status {
			return code
		}
	}
	if status < 500 {
		return graph.EINVALID
	}
	return graph.EINTERNAL
}
