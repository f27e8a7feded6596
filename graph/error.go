// Package graph holds memgate's domain: memory spaces, episodes, entities and facts,
// the store interfaces, and the one error type every layer speaks. It imports the
// standard library only.
package graph

import (
	"errors"
	"fmt"
	"time"
)

// Error codes. They describe what went wrong, never how a transport shows it: the
// handlers package maps each to an HTTP status in one place. The values are the codes
// clients see in the JSON error body.
const (
	EINVALID         = "invalid"             // the request is malformed or a field is out of range
	EUNPROCESSABLE   = "unprocessable"       // well-formed, but refused (credentials in content, key reuse)
	ENOTFOUND        = "not_found"           // does not exist, or is not visible to the requester
	ECONFLICT        = "conflict"            // exists already, or a concurrent change won
	EPRECONDITION    = "precondition_failed" // If-Match named a version that is no longer current
	EUNAUTHENTICATED = "unauthenticated"     // no or unknown host key
	EFORBIDDEN       = "forbidden"           // visible, but the requester may not change it
	ETOOLARGE        = "too_large"           // body or field over its limit
	ERATELIMITED     = "rate_limited"        // the host key sent more requests than its rate; retry after a while
	EQUOTA           = "quota_exceeded"      // a daily quota is used up; retry after RetryAfter
	EUNAVAILABLE     = "unavailable"         // a dependency (Neo4j, the LLM) cannot be reached; retry later
	EINTERNAL        = "internal"            // a bug or an unexpected failure; details are logged, not returned
)

// Error is memgate's error type. Message is safe to show to the client; internal
// details stay in the wrapped error, which is logged and never sent.
type Error struct {
	Code    string
	Message string
	Err     error
	// RetryAfter, when set, is when the request may succeed again (EQUOTA).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted client-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error that keeps err for the logs and shows only message.
func Wrap(code string, err error, message string) *Error {
	return &Error{Code: code, Message: message, Err: err}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for any
// other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err: the message of its *Error, or
// "internal error" for anything else.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != EINTERNAL {
		return e.Message
	}
	return "internal error"
}
