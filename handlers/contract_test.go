package handlers_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	valerrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// The contract checked on every call: every request the package's tests send and
// every response they get goes through contract, which validates both against
// openapi.json (the document the server serves) and fails the test with the
// validator's messages.

var (
	// specMu serialises the validator: libopenapi renders schemas lazily and is not
	// safe for concurrent use (the race detector shows it), while tests run in parallel.
	specMu      sync.Mutex
	specOnce    sync.Once
	specErr     error
	specCheck   validator.Validator
	errorSchema *base.Schema
	schemaCheck schema_validation.SchemaValidator
)

func loadSpec() {
	spec, err := os.ReadFile("openapi.json")
	if err != nil {
		specErr = err
		return
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		specErr = err
		return
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		specErr = err
		return
	}
	errorSchema = model.Model.Components.Schemas.GetOrZero("Error").Schema()
	opts := []config.Option{config.WithFormatAssertions()}
	schemaCheck = schema_validation.NewSchemaValidator(opts...)
	v, errs := validator.NewValidator(doc, opts...)
	if len(errs) > 0 {
		specErr = fmt.Errorf("building the validator: %v", errs)
		return
	}
	specCheck = v
}

// contract is the http.RoundTripper every test request goes through.
type contract struct {
	tb testing.TB
	// malformed marks a request a test sends outside the contract on purpose (a test
	// of 400s, of injection, of a missing key): it is sent as it is, and only the
	// response is checked. Set it through doMalformed or client.sendMalformed only.
	malformed bool
	next      http.RoundTripper
}

func newContract(tb testing.TB, malformed bool) contract {
	return contract{tb: tb, malformed: malformed, next: http.DefaultTransport}
}

func (c contract) RoundTrip(req *http.Request) (*http.Response, error) {
	specOnce.Do(loadSpec)
	if specErr != nil {
		c.tb.Errorf("loading openapi.json: %v", specErr)
		return c.next.RoundTrip(req)
	}
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	// A copy for the validator, which reads the body.
	view := func() *http.Request {
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
		return r
	}
	where := req.Method + " " + req.URL.Path
	if !c.malformed {
		specMu.Lock()
		ok, errs := specCheck.ValidateHttpRequestSync(view())
		specMu.Unlock()
		if !ok {
			c.tb.Errorf("contract: request %s does not follow openapi.json:%s", where, describe(errs))
		}
	}

	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	check := *resp
	check.Body = io.NopCloser(bytes.NewReader(respBody))
	ok, errs := c.checkResponse(view(), &check, respBody)
	if !ok {
		c.tb.Errorf("contract: response %d to %s does not follow openapi.json:%s\nbody: %.300s",
			resp.StatusCode, where, describe(errs), respBody)
	}
	return resp, nil
}

func (c contract) checkResponse(req *http.Request, resp *http.Response, body []byte) (bool, []*valerrors.ValidationError) {
	specMu.Lock()
	defer specMu.Unlock()
	ok, errs := specCheck.ValidateHttpResponse(req, resp)
	if !ok && c.malformed && operationMissing(errs) {
		// A deliberate request to a route or method openapi.json does not have: the
		// answer must still be an error in the one shape.
		ok, errs = true, nil
		if resp.StatusCode < 400 {
			ok, errs = false, []*valerrors.ValidationError{{Message: fmt.Sprintf("status %d for an undocumented route", resp.StatusCode)}}
		} else if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			ok, errs = false, []*valerrors.ValidationError{{Message: "an error answered as " + resp.Header.Get("Content-Type")}}
		} else {
			ok, errs = schemaCheck.ValidateSchemaBytes(errorSchema, body)
		}
	}
	return ok, errs
}

func operationMissing(errs []*valerrors.ValidationError) bool {
	for _, e := range errs {
		if e.IsPathMissingError() || e.IsOperationMissingError() {
			return true
		}
	}
	return false
}

func describe(errs []*valerrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  - %s: %s", e.Message, e.Reason)
		for _, s := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n      %s: %s", s.FieldPath, s.Reason)
		}
	}
	return b.String()
}

// recorder is a testing.TB that keeps what contract reports instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestContract checks the checker: against a scripted server, it reports a request
// and an answer that break openapi.json, skips the request (only) of a call marked
// malformed, and reports nothing for a call that follows the document.
func TestContract(t *testing.T) {
	t.Parallel()
	answers := map[string]struct {
		status int
		body   string
	}{
		"GET /v1/memories/m1":     {200, `{"id":"m1","status":"queued","created_at":"2024-03-01T00:00:00Z"}`},
		"GET /v1/memories/m2":     {200, `{"id":42}`},
		"GET /v1/memories/m3":     {200, `{"id":"m3","created_at":"yesterday"}`},
		"PUT /v1/agents/a/owner":  {200, `{"id":"a"}`},
		"POST /v1/memories":       {202, `{"id":"m1","group_id":"agent-a-private","status":"queued","confined":false}`},
		"GET /v1/nothing":         {404, `{"error":{"code":"not_found","message":"Not Found","request_id":"r1"}}`},
		"GET /v1/nothing-200":     {200, `{}`},
		"GET /v1/nothing-shapely": {404, `{"error":"not found"}`},
		"GET /v1/memories/m4":     {404, `{"error":{"code":"gone","message":"x","request_id":"r1"}}`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.Method+" "+r.URL.Path]
		if !ok {
			a.status, a.body = 500, `{"error":{"code":"internal","message":"unscripted","request_id":"r1"}}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	defer srv.Close()

	for _, c := range []struct {
		name, method, path, body string
		malformed                bool
		want                     string // what the report must hold; "" for none
	}{
		{"Follows", "GET", "/v1/memories/m1", "", false, ""},
		{"AnswerWrongType", "GET", "/v1/memories/m2", "", false, "response 200"},
		{"AnswerBadTime", "GET", "/v1/memories/m3", "", false, "response 200"},
		{"AnswerUndocumentedStatus", "PUT", "/v1/agents/a/owner", `{"owner_id":"b"}`, false, "response 200"},
		{"RequestFollows", "POST", "/v1/memories", `{"agent_id":"a","messages":"x"}`, false, ""},
		{"RequestMissesField", "POST", "/v1/memories", `{"agent_id":"a"}`, false, "request POST /v1/memories"},
		{"RequestUnknownField", "POST", "/v1/memories", `{"agent_id":"a","messages":"x","group_id":"g"}`, false, "request POST"},
		{"MalformedRequestNotChecked", "POST", "/v1/memories", `{"agent_id":"a"}`, true, ""},
		{"MalformedAnswerStillChecked", "GET", "/v1/memories/m2", "", true, "response 200"},
		{"UnknownCodeInError", "GET", "/v1/memories/m4", "", true, "response 404"},
		{"UndocumentedRoute", "GET", "/v1/nothing", "", false, "request GET /v1/nothing"},
		{"UndocumentedRouteMalformed", "GET", "/v1/nothing", "", true, ""},
		{"UndocumentedRouteAnswered200", "GET", "/v1/nothing-200", "", true, "status 200 for an undocumented route"},
		{"UndocumentedRouteOtherShape", "GET", "/v1/nothing-shapely", "", true, "response 404"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			req, err := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer k")
			req.Header.Set("X-Requester-Id", "contract-check")
			req.Header.Set("Content-Type", "application/json")
			resp, err := (&http.Client{Transport: newContract(rec, c.malformed)}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if want := answers[c.method+" "+c.path].body; string(body) != want {
				t.Errorf("the test read %q, want the server's answer %q", body, want)
			}
			report := strings.Join(rec.errors, "\n")
			switch {
			case c.want == "" && report != "":
				t.Errorf("reported a call that follows the contract:\n%s", report)
			case c.want != "" && !strings.Contains(report, c.want):
				t.Errorf("report %q, want one about %q", report, c.want)
			}
		})
	}
}
