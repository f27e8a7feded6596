package main

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/memgate/memgate"

// allowedImports is the dependency direction of STYLE.md: which of memgate's packages
// each package may import. cmd/memgate may import everything.
var allowedImports = map[string][]string{
	"graph":                             {},
	"graph/batch":                       {"graph"},
	"graph/terms":                       {"graph"},
	"cypher":                            {},
	"config":                            {"access", "graph"}, // the syntax of a key's requester binding; the ontology's rules
	"access":                            {"graph"},
	"access/idp":                        {"graph"},
	"access/idp/idptest":                {},
	"extract":                           {"graph", "graph/batch"},
	"extract/llmtest":                   {},
	"graph/neo4jstore":                  {"graph", "graph/batch", "graph/terms", "access", "cypher"},
	"graph/neo4jstore/neo4jtest":        {"graph", "graph/neo4jstore"},
	"graph/neo4jstore/neo4jtest/testdb": {"graph/neo4jstore/neo4jtest"},
	"access/accesstest":                 {"graph"},
	"service":                           {"graph", "graph/terms", "access"},
	"handlers":                          {"graph", "access", "extract", "service"},
	"webhook":                           {"graph", "service"},
	"client":                            {},
	"scripts/report":                    {},
	"eval":                              {"client", "extract", "graph", "service"},
}

// otelAPI is the part of OpenTelemetry a package may import: the API, never the SDK,
// which only cmd/memgate sets up.
var otelAPI = []string{"go.opentelemetry.io/otel/trace", "go.opentelemetry.io/otel/attribute",
	"go.opentelemetry.io/otel/codes", "go.opentelemetry.io/otel/propagation"}

// thirdParty says which packages may import a module outside the standard library;
// graph, cypher and access import the standard library only. The OpenTelemetry API goes
// where a span's name is known: requests, use cases, queries, model calls, ingestion.
var thirdParty = map[string][]string{
	"graph/terms":                       {"github.com/kljensen/snowball"},
	"config":                            {"github.com/spf13/viper", "github.com/go-viper/mapstructure", "gopkg.in/yaml.v3"},
	"graph/neo4jstore":                  append([]string{"github.com/neo4j/neo4j-go-driver"}, otelAPI...),
	"graph/neo4jstore/neo4jtest":        {"github.com/testcontainers/testcontainers-go", "github.com/neo4j/neo4j-go-driver"},
	"graph/neo4jstore/neo4jtest/testdb": {"github.com/neo4j/neo4j-go-driver"},
	"handlers":                          append([]string{"github.com/labstack/echo", "github.com/modelcontextprotocol/go-sdk", "github.com/google/jsonschema-go", "github.com/prometheus/client_golang", "golang.org/x/time"}, otelAPI...),
	"service":                           append([]string{"github.com/google/uuid", "golang.org/x/sync", "github.com/tiktoken-go/tokenizer"}, otelAPI...),
	"access/idp":                        {"github.com/golang-jwt/jwt", "github.com/MicahParks/keyfunc"},
	"webhook":                           {"github.com/standard-webhooks/standard-webhooks/libraries"},
	"access/idp/idptest":                {"github.com/golang-jwt/jwt"},
	"eval":                              {"github.com/neo4j/neo4j-go-driver", "github.com/sashabaranov/go-openai"},
	"extract":                           append([]string{"github.com/sashabaranov/go-openai", "github.com/google/uuid", "golang.org/x/text", "github.com/google/jsonschema-go"}, otelAPI...),
}

func TestLayout_DependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if pkg == "cmd/memgate" {
			continue
		}
		allowed, known := allowedImports[pkg]
		if !known {
			t.Errorf("package %s is not in the layout table; add it with the imports it may have", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			switch {
			case strings.HasPrefix(imp, module+"/"):
				target := strings.TrimPrefix(imp, module+"/")
				if !contains(allowed, target) {
					t.Errorf("%s imports %s; it may import only %v", pkg, target, allowed)
				}
			case strings.Contains(strings.Split(imp, "/")[0], "."):
				if !hasPrefixIn(thirdParty[pkg], imp) {
					t.Errorf("%s imports %s; it may import only %v outside the standard library", pkg, imp, thirdParty[pkg])
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasPrefixIn(prefixes []string, s string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
