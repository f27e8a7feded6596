package handlers_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/handlers"
	"github.com/memgate/memgate/service"
)

// TestOpenAPI loads /openapi.json with a maintained OpenAPI library, validates it
// against the OpenAPI 3.1 schema, and checks that it documents every route the server
// has and no route it lacks.
func TestOpenAPI(t *testing.T) {
	ring, _ := access.NewKeyring(nil, nil)
	e := handlers.New(handlers.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Keys: ring,
		Service: &service.Service{}, BodyLimit: "1M", HandlerTimeout: time.Second, Version: "test",
		Metrics: handlers.NewMetrics(handlers.Observed{})})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	spec := rec.Body.Bytes()

	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Errorf("OpenAPI version %s, want 3.1.0", v)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("building the validator: %v", errs)
	}
	if ok, problems := v.ValidateDocument(); !ok {
		for _, p := range problems {
			t.Errorf("invalid OpenAPI document: %s: %s", p.Message, p.Reason)
		}
	}

	var parsed struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(spec, &parsed); err != nil {
		t.Fatal(err)
	}
	var documented, served []string
	for path, ops := range parsed.Paths {
		for method := range ops {
			if method != "parameters" {
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	param := regexp.MustCompile(`:([a-z]+)`)
	for _, r := range e.Routes() {
		if strings.HasPrefix(r.Name, "github.com/labstack/echo") || r.Name == handlers.MethodNotAllowedRoute || r.Path == "" || strings.Contains(r.Path, "*") {
			continue // echo's own not-found and method-not-allowed handlers
		}
		served = append(served, r.Method+" "+param.ReplaceAllString(r.Path, "{$1}"))
	}
	slices.Sort(documented)
	slices.Sort(served)
	served = slices.Compact(served)
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(served, d) {
			t.Errorf("openapi.json documents %s, which the server does not serve", d)
		}
	}
	if len(served) < 25 {
		t.Errorf("only %d routes found: %v", len(served), served)
	}
}
