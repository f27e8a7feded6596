package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/graph"
)

// bind decodes the JSON body into v, a request type, refusing unknown fields (a body
// cannot set what the request type does not have: group_id, owner, status) and
// anything after the object.
func bind(c echo.Context, v any) error {
	return decodeJSON(c.Request().Body, v)
}

// decodeJSON decodes one JSON object from r into v as bind does: the one decoder of
// REST bodies and MCP tool arguments, so both refuse the same mistakes with the same
// messages.
func decodeJSON(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return graph.Errorf(graph.EINVALID, "the body must hold one JSON object")
	}
	return nil
}

// decodeError explains a JSON decoding error without echoing the input back.
func decodeError(err error) error {
	var he *echo.HTTPError
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &he):
		return err // the body limit
	case errors.Is(err, io.EOF):
		return graph.Errorf(graph.EINVALID, "the body is empty; send a JSON object")
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return graph.Errorf(graph.EINVALID, "the body is not valid JSON")
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return graph.Errorf(graph.EINVALID, "the body must be a JSON object")
		}
		return graph.Errorf(graph.EINVALID, "field %s must be %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		if r := []rune(field); len(r) > 66 { // cut whole characters, never inside one
			field = string(r[:66]) + `…"`
		}
		return graph.Errorf(graph.EINVALID, "unknown field %s", field)
	}
	// time.Time and other parsers: keep the message generic but useful.
	return graph.Errorf(graph.EINVALID, "the body has a malformed value (timestamps are RFC 3339, e.g. 2024-03-01T12:00:00Z)")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice", "array":
		return "a list"
	case "map", "struct":
		return "an object"
	case "bool":
		return "true or false"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	}
	return fmt.Sprintf("a %s", strings.TrimRight(goKind, "0123456789"))
}
