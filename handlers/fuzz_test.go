package handlers

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/memgate/memgate/graph"
)

// FuzzRequestDecoders sends arbitrary bodies to the decoder of every request type: it
// never panics, and what it refuses is a 400 with a short, valid message that does
// not echo the body. A memory that decodes is then turned into the service's form:
// again a 400 or nothing.
func FuzzRequestDecoders(f *testing.F) {
	for _, s := range []string{
		`{"agent_id":"a","messages":"hello"}`,
		`{"agent_id":"a","messages":[{"role":"user","content":"hi","timestamp":"2024-03-01T00:00:00Z"}]}`,
		`{"items":[{"agent_id":"a","messages":"x","tags":["t"],"confidence":0.5}]}`,
		`{"query":"acme","agent_id":"a","limit":5,"include":["facts"],"as_of":"2024-01-01T00:00:00Z"}`,
		`{"target":"public"}`, `{"id":"a","owner":"b"}`, `{"name":"t"}`, `{"principal":"p","role":"admin"}`,
		`{"group_id":"global"}`, `{"messages":{"role":1}}`, `[1,2]`, `{} {}`, `{"a":`, "", "null", `"x"`,
		`{"messages":[{"role":"user","content":"\u0000"}]}`, `{"reference_time":"yesterday"}`,
	} {
		f.Add([]byte(s))
	}
	e := echo.New()
	decoders := map[string]func(echo.Context) error{
		"memory": func(c echo.Context) error {
			var r memoryRequest
			if err := bind(c, &r); err != nil {
				return err
			}
			_, err := r.toNew()
			return err
		},
		"batch": func(c echo.Context) error {
			var r batchRequest
			if err := bind(c, &r); err != nil {
				return err
			}
			for _, item := range r.Items {
				if _, err := item.toNew(); err != nil {
					return err
				}
			}
			return nil
		},
		"search":  func(c echo.Context) error { return bind(c, &searchRequest{}) },
		"promote": func(c echo.Context) error { return bind(c, &promoteRequest{}) },
		"agent":   func(c echo.Context) error { return bind(c, &agentRequest{}) },
		"owner":   func(c echo.Context) error { return bind(c, &ownerRequest{}) },
		"team":    func(c echo.Context) error { return bind(c, &teamRequest{}) },
		"member":  func(c echo.Context) error { return bind(c, &memberRequest{}) },
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for name, decode := range decoders {
			req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			err := decode(e.NewContext(req, httptest.NewRecorder()))
			if err == nil {
				continue
			}
			var ge *graph.Error
			if !errors.As(err, &ge) || ge.Code != graph.EINVALID {
				t.Fatalf("%s: %v (%T), want an invalid-request error", name, err, err)
			}
			msg := ge.Message
			if !utf8.ValidString(msg) || utf8.RuneCountInString(msg) > 100 {
				t.Fatalf("%s: message %q is not short valid text", name, msg)
			}
			if len(body) >= 8 && bytes.Contains([]byte(msg), body) {
				t.Fatalf("%s: message %q echoes the body", name, msg)
			}
		}
	})
}
