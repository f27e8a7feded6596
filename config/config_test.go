package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/config"
)

// load writes yaml to a file (none when empty) and loads it with env set.
func load(t *testing.T, yaml string, env map[string]string) (*config.Config, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	path := ""
	if yaml != "" {
		path = filepath.Join(t.TempDir(), "memgate.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return config.Load(path)
}

func TestLoad_Defaults(t *testing.T) {
	t.Chdir(t.TempDir()) // no memgate.yaml here
	c, err := load(t, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]any{
		"server.addr":               {c.Server.Addr, "127.0.0.1:8080"},
		"neo4j.uri":                 {c.Neo4j.URI, "bolt://127.0.0.1:7687"},
		"neo4j.user":                {c.Neo4j.User, "neo4j"},
		"neo4j.database":            {c.Neo4j.Database, "neo4j"},
		"llm.provider":              {c.LLM.Provider, "heuristic"},
		"embedder.provider":         {c.Embedder.Provider, "hashing"},
		"embedder.dimensions":       {c.Embedder.Dimensions, 256},
		"memory.default_visibility": {c.Memory.DefaultVisibility, "private"},
		"memory.batch_max_items":    {c.Memory.BatchMaxItems, 10},
		"memory.expiry_sweep":       {c.Memory.ExpirySweep, time.Minute},
		"auth.keys":                 {len(c.Auth.Keys), 0},
	}
	for key, pair := range checks {
		if pair[0] != pair[1] {
			t.Errorf("%s = %v, want %v", key, pair[0], pair[1])
		}
	}
}

func TestLoad_EnvOverridesFile(t *testing.T) {
	c, err := load(t, `
server:
  addr: 127.0.0.1:9000
neo4j:
  uri: bolt://db.internal:7687
  password: from-file
memory:
  default_visibility: public
`, map[string]string{
		"MEMGATE_NEO4J_URI":           "neo4j+s://cluster.example:7687",
		"MEMGATE_NEO4J_DATABASE":      "memories",
		"MEMGATE_LLM_BASE_URL":        "http://127.0.0.1:11434/v1",
		"MEMGATE_EMBEDDER_API_KEY":    "sk-test",
		"MEMGATE_EMBEDDER_DIMENSIONS": "768",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Addr != "127.0.0.1:9000" {
		t.Errorf("server.addr = %q, want the file's value", c.Server.Addr)
	}
	if c.Neo4j.URI != "neo4j+s://cluster.example:7687" || c.Neo4j.Database != "memories" {
		t.Errorf("neo4j = %s/%s, want the environment's values", c.Neo4j.URI, c.Neo4j.Database)
	}
	if c.Neo4j.Password != "from-file" {
		t.Errorf("neo4j.password = %q, want the file's value", c.Neo4j.Password)
	}
	if c.LLM.Provider != "openai" || c.Embedder.Provider != "openai" {
		t.Errorf("providers = %s/%s, want openai when a base URL or key is set", c.LLM.Provider, c.Embedder.Provider)
	}
	if c.Embedder.Dimensions != 768 {
		t.Errorf("embedder.dimensions = %d, want 768", c.Embedder.Dimensions)
	}
	if c.Memory.DefaultVisibility != "public" {
		t.Errorf("memory.default_visibility = %q, want public", c.Memory.DefaultVisibility)
	}
}

func TestLoad_HostKeys(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	c, err := load(t, `
server:
  addr: 0.0.0.0:8080
auth:
  keys:
    - name: agent-host
      sha256: "`+hash+`"
      trusted: true
    - name: ops
      sha256: "`+strings.Repeat("cd", 32)+`"
      trusted: true
      admin: true
      assert_teams: true
    - name: plugin
      sha256: "`+strings.Repeat("ef", 32)+`"
      requesters: [app1-*, carol]
`, nil)
	if err != nil {
		t.Fatalf("a non-loopback address with keys must load: %v", err)
	}
	if len(c.Auth.Keys) != 3 || c.Auth.Keys[0].Name != "agent-host" || !c.Auth.Keys[1].Admin || c.Auth.Keys[0].Admin ||
		strings.Join(c.Auth.Keys[2].Requesters, " ") != "app1-* carol" || c.Auth.Keys[0].Requesters != nil ||
		!c.Auth.Keys[1].AssertTeams || c.Auth.Keys[0].AssertTeams || c.Auth.Keys[2].AssertTeams {
		t.Fatalf("auth.keys = %+v", c.Auth.Keys)
	}
	out, err := c.Redacted().YAML()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), hash) {
		t.Errorf("printed configuration contains a full key hash:\n%s", out)
	}
}

func TestRedacted_MasksSecrets(t *testing.T) {
	c, err := load(t, "", map[string]string{
		"MEMGATE_NEO4J_PASSWORD":   "neo4j-secret-pw",
		"MEMGATE_LLM_API_KEY":      "sk-llm-secret",
		"MEMGATE_EMBEDDER_API_KEY": "sk-emb-secret",
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Redacted().YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"neo4j-secret-pw", "sk-llm-secret", "sk-emb-secret"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("printed configuration contains %q:\n%s", secret, out)
		}
	}
	if c.Neo4j.Password != "neo4j-secret-pw" {
		t.Error("Redacted changed the original configuration")
	}
}

func TestLoad_JWT(t *testing.T) {
	c, err := load(t, `
server:
  addr: 0.0.0.0:8080
auth:
  jwt:
    issuer: https://idp.example.com/
    audience: memgate
    jwks_url: https://idp.example.com/.well-known/jwks.json
    requester_prefix: sso-
`, nil)
	if err != nil {
		t.Fatalf("a non-loopback address with an identity provider must load: %v", err)
	}
	j := c.Auth.JWT
	if !j.Enabled() || j.Claim != "sub" || j.Refresh != time.Hour || j.RequesterPrefix != "sso-" {
		t.Fatalf("auth.jwt = %+v", j)
	}
}

func TestLoad_ErrInvalid(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		env  map[string]string
		want string // the key the message must name
	}{
		{"LogLevel", "", map[string]string{"MEMGATE_LOG_LEVEL": "verbose"}, "log.level"},
		{"LogFormat", "log:\n  format: xml\n", nil, "log.format"},
		{"URIMalformed", "", map[string]string{"MEMGATE_NEO4J_URI": "not a uri"}, "neo4j.uri"},
		{"URIScheme", "", map[string]string{"MEMGATE_NEO4J_URI": "http://127.0.0.1:7474"}, "neo4j.uri"},
		{"PublicWithoutKeys", "", map[string]string{"MEMGATE_SERVER_ADDR": "0.0.0.0:8080"}, "server.addr"},
		{"AllInterfacesWithoutKeys", "", map[string]string{"MEMGATE_SERVER_ADDR": ":8080"}, "server.addr"},
		{"AddrNoPort", "", map[string]string{"MEMGATE_SERVER_ADDR": "127.0.0.1"}, "server.addr"},
		{"UnknownKey", "neo4j:\n  url: bolt://x:7687\n", nil, "neo4j.url"},
		{"Provider", "", map[string]string{"MEMGATE_LLM_PROVIDER": "anthropic"}, "llm.provider"},
		{"EmbedderProvider", "", map[string]string{"MEMGATE_EMBEDDER_PROVIDER": "word2vec"}, "embedder.provider"},
		{"BaseURL", "", map[string]string{"MEMGATE_LLM_BASE_URL": "ftp://x"}, "llm.base_url"},
		{"Visibility", "", map[string]string{"MEMGATE_MEMORY_DEFAULT_VISIBILITY": "team"}, "memory.default_visibility"},
		{"PrivateDisallowed", "memory:\n  allow_private: false\n", nil, "memory.default_visibility"},
		{"Timeout", "server:\n  handler_timeout: 0s\n", nil, "server.handler_timeout"},
		{"BodyLimit", "server:\n  body_limit: lots\n", nil, "server.body_limit"},
		{"RateLimit", "server:\n  rate_limit: -1\n", nil, "server.rate_limit"},
		{"RateBurst", "server:\n  rate_burst: 0\n", nil, "server.rate_burst"},
		{"PageSize", "memory:\n  page_size_default: 500\n", nil, "memory.page_size_default"},
		{"Dimensions", "", map[string]string{"MEMGATE_EMBEDDER_DIMENSIONS": "99999"}, "embedder.dimensions"},
		{"KeyHash", "auth:\n  keys:\n    - name: k\n      sha256: nothex\n", nil, "auth.keys[0].sha256"},
		{"KeyName", "auth:\n  keys:\n    - sha256: \"" + strings.Repeat("ab", 32) + "\"\n", nil, "auth.keys[0].name"},
		{"KeyBinding", "auth:\n  keys:\n    - name: k\n      sha256: \"" + strings.Repeat("ab", 32) + "\"\n      requesters: [\"app1:*\"]\n", nil, "auth.keys[0].requesters[0]"},
		{"KeyAssertsUntrusted", "auth:\n  keys:\n    - name: plugin\n      sha256: \"" + strings.Repeat("ab", 32) + "\"\n      assert_teams: true\n", nil, `auth.keys[0].assert_teams: key "plugin" may assert teams only with trusted: true`},
		{"KeyNamedLikeJWT", "auth:\n  keys:\n    - name: \"jwt:x\"\n      sha256: \"" + strings.Repeat("ab", 32) + "\"\n", nil, "auth.keys[0].name"},
		{"JWTNoKeys", "auth:\n  jwt:\n    issuer: https://idp/\n    audience: memgate\n", nil, "auth.jwt.jwks_file"},
		{"JWTBothKeys", "auth:\n  jwt:\n    issuer: https://idp/\n    audience: memgate\n    jwks_file: /x\n    jwks_url: https://idp/jwks\n", nil, "auth.jwt.jwks_file"},
		{"JWTPlainURL", "auth:\n  jwt:\n    issuer: https://idp/\n    audience: memgate\n    jwks_url: http://idp.example.com/jwks\n", nil, "auth.jwt.jwks_url"},
		{"JWTNoAudience", "auth:\n  jwt:\n    issuer: https://idp/\n    jwks_file: /x\n", nil, "auth.jwt.audience"},
		{"JWTNoIssuer", "auth:\n  jwt:\n    audience: memgate\n    jwks_file: /x\n", nil, "auth.jwt.issuer"},
		{"JWTPrefix", "auth:\n  jwt:\n    issuer: https://idp/\n    audience: memgate\n    jwks_file: /x\n    requester_prefix: SSO/\n", nil, "auth.jwt.requester_prefix"},
		{"JWTRefresh", "auth:\n  jwt:\n    issuer: https://idp/\n    audience: memgate\n    jwks_file: /x\n    refresh: 0s\n", nil, "auth.jwt.refresh"},
		{"StructuredOutput", "", map[string]string{"MEMGATE_LLM_STRUCTURED_OUTPUT": "xml"}, "llm.structured_output"},
		{"MaxTokens", "llm:\n  max_tokens: 0\n", nil, "llm.max_tokens"},
		{"Conflicts", "", map[string]string{"MEMGATE_MEMORY_CONFLICTS": "ignore"}, "memory.conflicts"},
		{"ExpirySweep", "memory:\n  expiry_sweep: -1s\n", nil, "memory.expiry_sweep"},
		{"VisibilityRulePattern", "memory:\n  visibility_rules:\n    - pattern: \"(unclosed\"\n      visibility: private\n", nil, "memory.visibility_rules[0].pattern"},
		{"VisibilityRuleWidens", "memory:\n  visibility_rules:\n    - pattern: x\n      visibility: private\n    - pattern: shareable\n      visibility: public\n", nil, "memory.visibility_rules[1].visibility"},
		{"VisibilityRuleNoPrivate", "memory:\n  allow_private: false\n  default_visibility: public\n  visibility_rules:\n    - pattern: x\n      visibility: private\n", nil, "memory.visibility_rules[0].visibility"},
		{"PublicWriteQuota", "", map[string]string{"MEMGATE_LIMITS_PUBLIC_WRITES_PER_AGENT_PER_DAY": "-5"}, "limits.public_writes_per_agent_per_day"},
		{"NotANumber", "", map[string]string{"MEMGATE_INGEST_WORKERS": "many"}, "workers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.yaml, tc.env)
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name %s", err, tc.want)
			}
		})
	}
}

func TestLoad_ErrMissingFile(t *testing.T) {
	if _, err := config.Load(filepath.Join(t.TempDir(), "absent.yaml")); err == nil {
		t.Fatal("loading a missing file succeeded")
	}
}

func TestParseBytes(t *testing.T) {
	ok := map[string]int64{"1": 1, "512K": 512 << 10, "2M": 2 << 20, "1g": 1 << 30}
	for in, want := range ok {
		if got, err := config.ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1K", "2MB", "1.5M", "M", "12x"} {
		if _, err := config.ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) succeeded", in)
		}
	}
}

func TestLoad_VisibilityRules(t *testing.T) {
	c, err := load(t, "memory:\n  visibility_rules:\n    - name: ssn\n      pattern: '\\b\\d{3}-\\d{2}-\\d{4}\\b'\n      visibility: private\n    - pattern: '(?i)confidential'\n      visibility: private\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Memory.VisibilityRules
	if len(got) != 2 || got[0].Name != "ssn" || got[0].Pattern != `\b\d{3}-\d{2}-\d{4}\b` || got[1].Name != "visibility_rules[1]" {
		t.Fatalf("rules %+v", got)
	}
}

// TestLoad_ErrUnknownEntryField: a field of a list entry memgate does not know (a
// misspelt requesters on a trusted key would let it name anyone) stops the start,
// naming the entry and the field and listing the fields it has; so does a list set
// from the environment or written as a single map.
func TestLoad_ErrUnknownEntryField(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	cases := []struct {
		name string
		yaml string
		env  map[string]string
		want []string // what the message must say
	}{
		{"KeyRequesters", "auth:\n  keys:\n    - name: k\n      sha256: \"" + hash + "\"\n      trusted: true\n      allowed_requesters: [app1-*]\n", nil,
			[]string{`auth.keys[0]: unknown field "allowed_requesters"`, "name, sha256, trusted, admin, requesters"}},
		{"SecondKey", "auth:\n  keys:\n    - name: a\n      sha256: \"" + hash + "\"\n    - name: b\n      sha256: \"" + strings.Repeat("cd", 32) + "\"\n      trusted: true\n      requester: carol\n", nil,
			[]string{`auth.keys[1]: unknown field "requester"`}},
		{"KeyAdminTypo", "auth:\n  keys:\n    - name: k\n      sha256: \"" + hash + "\"\n      is_admin: false\n", nil,
			[]string{`auth.keys[0]: unknown field "is_admin"`}},
		{"KeyAdminCapitalised", "auth:\n  keys:\n    - name: k\n      sha256: \"" + hash + "\"\n      admin: false\n      Admin: true\n", nil,
			[]string{`auth.keys[0]: unknown field "Admin"`}},
		{"SectionsCapitalised", "Auth:\n  Keys:\n    - name: k\n      sha256: \"" + hash + "\"\n      trusted: true\n      allowed_requesters: [app1-*]\n", nil,
			[]string{`Auth: keys are written in lower case (auth)`}},
		{"SectionCapitalised", "memory:\n  visibility_rules:\n    - pattern: secret\n      visibility: private\nMemory:\n  max_versions: 5\n", nil,
			[]string{`Memory: keys are written in lower case (memory)`}},
		{"KeyCapitalised", "memory:\n  max_versions: 5\n  Max_Versions: 1\n", nil,
			[]string{`memory.Max_Versions: keys are written in lower case (memory.max_versions)`}},
		{"KeysAsMap", "auth:\n  keys:\n    name: k\n    sha256: \"" + hash + "\"\n    trusted: true\n", nil,
			[]string{"auth.keys: must be a list"}},
		{"KeysFromEnv", "", map[string]string{"MEMGATE_AUTH_KEYS": `[{"name":"k","sha256":"` + hash + `","trusted":true}]`},
			[]string{"auth.keys", "MEMGATE_AUTH_KEYS"}},
		{"EntityType", "ingest:\n  entity_types:\n    - name: Person\n      desc: a human\n", nil,
			[]string{`ingest.entity_types[0]: unknown field "desc"`, "name, description"}},
		{"Attribute", "ingest:\n  entity_types:\n    - name: Customer\n      attributes:\n        - name: tier\n          typ: string\n", nil,
			[]string{`ingest.entity_types[0].attributes[0]: unknown field "typ"`, "name, type, description, values"}},
		{"EdgeType", "ingest:\n  edge_types:\n    - name: PURCHASED\n      sources: [Person]\n", nil,
			[]string{`ingest.edge_types[0]: unknown field "sources"`, "name, description, source_types, target_types, attributes"}},
		{"EdgeAttribute", "ingest:\n  edge_types:\n    - name: PURCHASED\n      attributes:\n        - name: qty\n          type: number\n          unit: kg\n", nil,
			[]string{`ingest.edge_types[0].attributes[0]: unknown field "unit"`}},
		{"AttributesAsMap", "ingest:\n  entity_types:\n    - name: Customer\n      attributes:\n        name: tier\n", nil,
			[]string{`ingest.entity_types[0].attributes: must be a list of entries`}},
		{"VisibilityRule", "memory:\n  visibility_rules:\n    - pattern: secret\n      visibility: private\n      flags: i\n", nil,
			[]string{`memory.visibility_rules[0]: unknown field "flags"`, "name, pattern, visibility"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, tc.yaml, tc.env)
			if err == nil {
				t.Fatalf("loaded (auth.keys %+v); want an error", c.Auth.Keys)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %s", err, want)
				}
			}
		})
	}
}

// A MEMGATE_ variable that names no setting stops the load, named with the nearest
// known variable when one is close; the client commands' key variable is known.
func TestLoad_ErrUnknownVariable(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := load(t, "", map[string]string{config.ClientKeyVariable: "k", "MEMGATE_LLM_MODEL": "m"}); err != nil {
		t.Fatalf("known variables refused: %v", err)
	}
	_, err := load(t, "", map[string]string{"MEMGATE_LLM_MODLE": "x", "MEMGATE_WHATEVER_THING": "y"})
	for _, want := range []string{"MEMGATE_LLM_MODLE names no setting (did you mean MEMGATE_LLM_MODEL?)",
		"MEMGATE_WHATEVER_THING names no setting;"} {
		if err == nil || !strings.Contains(err.Error()+";", want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

// ontology is a Customer/Product ontology with every attribute type and an edge type
// between them.
const ontology = `ingest:
  entity_types:
    - name: Customer
      description: someone who buys from us
      attributes:
        - {name: tier, type: enum, values: [bronze, silver, gold], description: loyalty tier}
        - {name: email, type: string}
        - {name: since, type: date}
        - {name: vip, type: boolean}
    - name: Product
      attributes:
        - {name: sku, type: string}
        - {name: price, type: number}
  edge_types:
    - name: PURCHASED
      description: a customer bought a product
      source_types: [Customer]
      target_types: [Product]
      attributes:
        - {name: quantity, type: number}
`

func TestLoad_Ontology(t *testing.T) {
	c, err := load(t, ontology, nil)
	if err != nil {
		t.Fatal(err)
	}
	et, ed := c.Ingest.EntityTypes, c.Ingest.EdgeTypes
	if len(et) != 2 || len(et[0].Attributes) != 4 || et[0].Attributes[0].Type != "enum" ||
		!slices.Equal(et[0].Attributes[0].Values, []string{"bronze", "silver", "gold"}) || et[1].Attributes[1].Name != "price" {
		t.Fatalf("entity types %+v", et)
	}
	if len(ed) != 1 || ed[0].Name != "PURCHASED" || !slices.Equal(ed[0].SourceTypes, []string{"Customer"}) ||
		!slices.Equal(ed[0].TargetTypes, []string{"Product"}) || ed[0].Attributes[0].Name != "quantity" {
		t.Fatalf("edge types %+v", ed)
	}
}

// TestLoad_ErrOntology: a bad ontology stops the start naming the key: a name that
// is a property memgate or Graphiti uses, a bad or unknown type, an enum without
// values, values on a non-enum, an edge type joining an undeclared type.
func TestLoad_ErrOntology(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"ReservedUUID", "ingest:\n  entity_types:\n    - name: Customer\n      attributes: [{name: uuid, type: string}]\n",
			`ingest.entity_types[0].attributes[0].name: "uuid" is a property memgate or Graphiti uses itself`},
		{"ReservedSummary", "ingest:\n  entity_types:\n    - name: Customer\n      attributes: [{name: summary, type: string}]\n",
			`ingest.entity_types[0].attributes[0].name: "summary" is a property`},
		{"ReservedEdge", "ingest:\n  edge_types:\n    - name: PURCHASED\n      attributes: [{name: valid_at, type: date}]\n",
			`ingest.edge_types[0].attributes[0].name: "valid_at" is a property`},
		{"ReservedGroupID", "ingest:\n  entity_types:\n    - name: Customer\n      attributes: [{name: group_id, type: string}]\n",
			`ingest.entity_types[0].attributes[0].name: "group_id" is a property`},
		{"BadName", "ingest:\n  entity_types:\n    - name: Customer\n      attributes: [{name: Tier, type: string}]\n",
			`ingest.entity_types[0].attributes[0].name: "Tier" must be snake_case`},
		{"Twice", "ingest:\n  entity_types:\n    - name: Customer\n      attributes: [{name: tier, type: string}, {name: tier, type: number}]\n",
			`ingest.entity_types[0].attributes[1].name: "tier" is declared twice`},
		{"BadType", "ingest:\n  entity_types:\n    - name: Customer\n      attributes: [{name: tier, type: text}]\n",
			`ingest.entity_types[0].attributes[0].type: unknown type "text"`},
		{"EnumWithoutValues", "ingest:\n  entity_types:\n    - name: Customer\n      attributes: [{name: tier, type: enum}]\n",
			`ingest.entity_types[0].attributes[0].values: an enum needs its values`},
		{"ValuesOnString", "ingest:\n  entity_types:\n    - name: Customer\n      attributes: [{name: tier, type: string, values: [a]}]\n",
			`ingest.entity_types[0].attributes[0].values: only an enum has values`},
		{"EntityLabel", "ingest:\n  entity_types:\n    - name: Episodic\n",
			`ingest.entity_types[0].name: "Episodic" is a label memgate or Graphiti gives nodes itself`},
		{"MemgateLabel", "ingest:\n  entity_types:\n    - name: Agent\n",
			`ingest.entity_types[0].name: "Agent" is a label memgate or Graphiti gives nodes itself`},
		{"EdgeName", "ingest:\n  edge_types:\n    - name: purchased\n",
			`ingest.edge_types[0].name: "purchased" must be SCREAMING_SNAKE_CASE`},
		{"EdgeTwice", "ingest:\n  edge_types:\n    - name: PURCHASED\n    - name: PURCHASED\n",
			`ingest.edge_types[1].name: "PURCHASED" is declared twice`},
		{"EdgeEnd", "ingest:\n  entity_types:\n    - name: Customer\n  edge_types:\n    - name: PURCHASED\n      source_types: [Customer]\n      target_types: [Product]\n",
			`ingest.edge_types[0].target_types[0]: "Product" is not an entity type`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.yaml, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want %q", err, tc.want)
			}
		})
	}
	// Without ingest.entity_types an edge type may join the built-in types.
	if _, err := load(t, "ingest:\n  edge_types:\n    - name: FOUNDED\n      source_types: [Person]\n      target_types: [Organization]\n", nil); err != nil {
		t.Fatal(err)
	}
}
