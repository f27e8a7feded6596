// Package config loads memgate's configuration from a YAML file and MEMGATE_*
// environment variables. It is the only package that imports viper.
package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
	"gopkg.in/yaml.v3"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

// Config is memgate's effective configuration. Every key has a default (see
// defaults), so an empty file is a valid configuration for local development.
type Config struct {
	Server   Server   `yaml:"server"`
	Log      Log      `yaml:"log"`
	Neo4j    Neo4j    `yaml:"neo4j"`
	Auth     Auth     `yaml:"auth"`
	LLM      LLM      `yaml:"llm"`
	Embedder Embedder `yaml:"embedder"`
	Memory   Memory   `yaml:"memory"`
	Ingest   Ingest   `yaml:"ingest"`
	Limits   Limits   `yaml:"limits"`
	Webhooks Webhooks `yaml:"webhooks"`
}

// Webhooks configures the delivery of webhook events from the outbox.
type Webhooks struct {
	// Workers is how many deliveries this process sends at once; 0: it sends none
	// (another process does), though it still writes the outbox.
	Workers int `yaml:"workers"`
	// AllowLoopback lets webhooks reach loopback addresses (receivers on the same
	// machine): for development and tests only.
	AllowLoopback bool `yaml:"allow_loopback"`
	// AllowNetworks are networks (CIDR, or one address) webhooks may reach although
	// they are private, link-local or reserved: internal receivers. A cloud metadata
	// address is reached only when an entry is that one address.
	AllowNetworks []string      `yaml:"allow_networks"`
	Timeout       time.Duration `yaml:"timeout"`     // one attempt, connection to answer
	Poll          time.Duration `yaml:"poll"`        // how long a deliverer waits after a claim that found less than a full batch
	BackoffMin    time.Duration `yaml:"backoff_min"` // the first retry's wait, doubled per attempt
	BackoffMax    time.Duration `yaml:"backoff_max"` // the longest wait between attempts
	Horizon       time.Duration `yaml:"horizon"`     // how long after its event a delivery is retried
	Retention     time.Duration `yaml:"retention"`   // how long finished deliveries are kept
	// Scope limits this process's deliveries to the webhooks of requesters whose id
	// contains it ("" all): tests and staged rollouts.
	Scope string `yaml:"scope"`
}

// Limits are quotas on what requesters may do.
type Limits struct {
	// PublicWritesPerAgentPerDay caps each agent's writes to its public space per UTC
	// day, counted in Neo4j so every replica shares the count; 0: no cap.
	PublicWritesPerAgentPerDay int `yaml:"public_writes_per_agent_per_day"`
}

type Server struct {
	Addr              string        `yaml:"addr"`
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	ReadTimeout       time.Duration `yaml:"read_timeout"`
	WriteTimeout      time.Duration `yaml:"write_timeout"`
	IdleTimeout       time.Duration `yaml:"idle_timeout"`
	HandlerTimeout    time.Duration `yaml:"handler_timeout"`
	ShutdownTimeout   time.Duration `yaml:"shutdown_timeout"`
	BodyLimit         string        `yaml:"body_limit"`
	RateLimit         float64       `yaml:"rate_limit"` // requests per second per host key; 0: no limit
	RateBurst         int           `yaml:"rate_burst"` // requests a host key may send at once above the rate
	// MetricsAddr, when set, is the one address /metrics is served on (host:port),
	// instead of addr: a listener monitoring reaches and clients do not.
	MetricsAddr string `yaml:"metrics_addr"`
	// MetricsKeySHA256, when set, is the SHA-256 (hex) of the key a scrape of /metrics
	// must send as "Authorization: Bearer <key>".
	MetricsKeySHA256 string `yaml:"metrics_key_sha256"`
}

type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

type Neo4j struct {
	URI            string        `yaml:"uri"`
	User           string        `yaml:"user"`
	Password       string        `yaml:"password"`
	Database       string        `yaml:"database"`
	MaxPoolSize    int           `yaml:"max_pool_size"`
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// MaxRetryTime bounds how long the driver retries a transaction that failed for a
	// transient reason (Neo4j unreachable, a deadlock) before the request gets 503.
	MaxRetryTime time.Duration `yaml:"max_retry_time"`
	// MigrateOnStart applies the schema when serve starts and keeps retrying in the
	// background while Neo4j cannot be reached.
	MigrateOnStart bool `yaml:"migrate_on_start"`
}

// Auth lists the host keys and the identity provider whose JWTs end users may bring.
// No keys and no identity provider means dev mode: loopback only, every request
// treated as coming from a trusted admin host.
type Auth struct {
	Keys []access.KeySpec `yaml:"keys"`
	JWT  JWT              `yaml:"jwt"`
}

// JWT configures verified end-user identity: a request whose bearer is a JWT signed
// by one of the identity provider's keys (JWKS), with this issuer and audience, acts
// for the requester its claim names. Off while issuer is empty.
type JWT struct {
	Issuer          string        `yaml:"issuer"`
	Audience        string        `yaml:"audience"`
	JWKSFile        string        `yaml:"jwks_file"` // re-read when it changes
	JWKSURL         string        `yaml:"jwks_url"`  // fetched every refresh, and for an unknown kid
	Refresh         time.Duration `yaml:"refresh"`
	Claim           string        `yaml:"claim"`            // the claim holding the requester id
	RequesterPrefix string        `yaml:"requester_prefix"` // put before it, e.g. "sso-"
	OrgClaim        string        `yaml:"org_claim"`        // the claim holding the user's organization; empty: the implicit one
}

// Enabled reports whether end users' JWTs are accepted.
func (j JWT) Enabled() bool { return j.Issuer != "" }

type LLM struct {
	Provider       string        `yaml:"provider"`
	BaseURL        string        `yaml:"base_url"`
	APIKey         string        `yaml:"api_key"`
	Model          string        `yaml:"model"`
	Timeout        time.Duration `yaml:"timeout"`
	MaxConcurrency int           `yaml:"max_concurrency"`
	MaxRetries     int           `yaml:"max_retries"`
	// StructuredOutput is how a chat call asks for JSON: json_schema, json_object (with
	// a schema, llama-cpp-python's form), tools, prompt, or auto (json_schema, and the
	// next mode once a server refuses one).
	StructuredOutput string `yaml:"structured_output"`
	MaxTokens        int    `yaml:"max_tokens"` // per chat call: a model repeating itself stops there
	// Rules has the offline extractor's rules check the model's extraction: a fact they
	// find that the model missed is added, their explicit dates and endings stand.
	Rules bool `yaml:"rules"`
}

// StructuredOutputs are the values of llm.structured_output.
var StructuredOutputs = []string{"auto", "json_schema", "json_object", "tools", "prompt"}

type Embedder struct {
	Provider   string        `yaml:"provider"`
	BaseURL    string        `yaml:"base_url"`
	APIKey     string        `yaml:"api_key"`
	Model      string        `yaml:"model"`
	Dimensions int           `yaml:"dimensions"`
	Timeout    time.Duration `yaml:"timeout"`
	// QueryPrefix and DocumentPrefix begin every text embedded as a search query and
	// as something stored (a memory, a name, a fact): models trained with such
	// prefixes (e5's "query: " and "passage: ") rank far better with them.
	QueryPrefix    string `yaml:"query_prefix"`
	DocumentPrefix string `yaml:"document_prefix"`
}

type Memory struct {
	DefaultVisibility string `yaml:"default_visibility"`
	AllowPrivate      bool   `yaml:"allow_private"`
	RefuseCredentials bool   `yaml:"refuse_credentials"`
	MaxContentBytes   int    `yaml:"max_content_bytes"`
	BatchMaxItems     int    `yaml:"batch_max_items"`
	PageSizeDefault   int    `yaml:"page_size_default"`
	PageSizeMax       int    `yaml:"page_size_max"`
	// MaxVersions is how many earlier versions of a memory are kept; an update beyond
	// it erases the oldest.
	MaxVersions int `yaml:"max_versions"`
	// ExpirySweep is how often expired memories are erased; 0: this process does not
	// sweep (reads hide them anyway).
	ExpirySweep time.Duration `yaml:"expiry_sweep"`
	// Conflicts is what a contradiction does: invalidate ends the older fact (Graphiti's
	// rule); review keeps both current, marked, until a writer resolves the conflict.
	Conflicts string `yaml:"conflicts"`
	// ContextTokenizer is the token encoding a context block is counted in, and the
	// tokens of a model call whose answer reports none (service.Tokenizers).
	ContextTokenizer string `yaml:"context_tokenizer"`
	// VisibilityRules classify a write by its content, first match wins: a public or
	// team write whose content matches a rule's pattern is stored in the agent's
	// private space instead. A rule only narrows, so its visibility is private.
	VisibilityRules []VisibilityRule `yaml:"visibility_rules"`
}

// VisibilityRule is one content rule: an RE2 pattern and the visibility it imposes.
type VisibilityRule struct {
	Name       string `yaml:"name"` // shown on the memory; default visibility_rules[i]
	Pattern    string `yaml:"pattern"`
	Visibility string `yaml:"visibility"`
}

type Ingest struct {
	Workers     int           `yaml:"workers"` // 0: this process accepts episodes but does not process them
	Lease       time.Duration `yaml:"lease"`
	MaxAttempts int           `yaml:"max_attempts"`
	Backoff     time.Duration `yaml:"backoff"`
	Poll        time.Duration `yaml:"poll"`
	Scope       string        `yaml:"scope"`        // process only spaces whose group_id starts with this ("" all)
	EntityTypes []EntityType  `yaml:"entity_types"` // empty: the built-in list
	EdgeTypes   []EdgeType    `yaml:"edge_types"`   // empty: relations are free text only
}

// EntityType is a kind of entity extraction may assign; its name becomes a node label
// and each attribute a property of the node.
type EntityType struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Attributes  []Attribute `yaml:"attributes"`
}

// EdgeType is a kind of relation between entities of the given types (none: any); its
// name is the RELATES_TO edge's name and each attribute a property of the edge.
type EdgeType struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	SourceTypes []string    `yaml:"source_types"`
	TargetTypes []string    `yaml:"target_types"`
	Attributes  []Attribute `yaml:"attributes"`
}

// Attribute is a typed attribute of an entity or edge type: type string, number,
// boolean, date, or enum with values.
type Attribute struct {
	Name        string   `yaml:"name"`
	Type        string   `yaml:"type"`
	Description string   `yaml:"description"`
	Values      []string `yaml:"values"`
}

// Provider names.
const (
	ProviderOpenAI    = "openai"
	ProviderHeuristic = "heuristic"
	ProviderHashing   = "hashing"
)

// defaults holds every key and its default; a key missing here cannot be set from
// the environment, so keep it complete.
var defaults = map[string]any{
	"server.addr":                            "127.0.0.1:8080",
	"server.read_header_timeout":             "5s",
	"server.read_timeout":                    "30s",
	"server.write_timeout":                   "60s",
	"server.idle_timeout":                    "120s",
	"server.handler_timeout":                 "30s",
	"server.shutdown_timeout":                "20s",
	"server.body_limit":                      "2M",
	"server.rate_limit":                      100,
	"server.rate_burst":                      200,
	"server.metrics_addr":                    "",
	"server.metrics_key_sha256":              "",
	"log.level":                              "info",
	"log.format":                             "json",
	"neo4j.uri":                              "bolt://127.0.0.1:7687",
	"neo4j.user":                             "neo4j",
	"neo4j.password":                         "",
	"neo4j.database":                         "neo4j",
	"neo4j.max_pool_size":                    50,
	"neo4j.connect_timeout":                  "5s",
	"neo4j.max_retry_time":                   "5s",
	"neo4j.migrate_on_start":                 true,
	"auth.keys":                              []map[string]any{},
	"auth.jwt.issuer":                        "",
	"auth.jwt.audience":                      "",
	"auth.jwt.jwks_file":                     "",
	"auth.jwt.jwks_url":                      "",
	"auth.jwt.refresh":                       "1h",
	"auth.jwt.claim":                         "sub",
	"auth.jwt.requester_prefix":              "",
	"auth.jwt.org_claim":                     "",
	"llm.provider":                           "",
	"llm.base_url":                           "",
	"llm.api_key":                            "",
	"llm.model":                              "gpt-4o-mini",
	"llm.timeout":                            "60s",
	"llm.max_concurrency":                    4,
	"llm.max_retries":                        4,
	"llm.structured_output":                  "auto",
	"llm.max_tokens":                         2048,
	"llm.rules":                              true,
	"embedder.provider":                      "",
	"embedder.base_url":                      "",
	"embedder.api_key":                       "",
	"embedder.model":                         "text-embedding-3-small",
	"embedder.dimensions":                    0,
	"embedder.timeout":                       "30s",
	"embedder.query_prefix":                  "",
	"embedder.document_prefix":               "",
	"memory.default_visibility":              "private",
	"memory.allow_private":                   true,
	"memory.refuse_credentials":              true,
	"memory.max_content_bytes":               256 << 10,
	"memory.batch_max_items":                 10,
	"memory.page_size_default":               20,
	"memory.page_size_max":                   100,
	"memory.max_versions":                    20,
	"memory.expiry_sweep":                    "1m",
	"memory.conflicts":                       "invalidate",
	"memory.context_tokenizer":               "o200k_base",
	"limits.public_writes_per_agent_per_day": 0,
	"ingest.workers":                         4,
	"ingest.lease":                           "2m",
	"ingest.max_attempts":                    5,
	"ingest.backoff":                         "2s",
	"ingest.poll":                            "250ms",
	"ingest.scope":                           "",
	"ingest.entity_types":                    []map[string]any{},
	"ingest.edge_types":                      []map[string]any{},
	"memory.visibility_rules":                []map[string]any{},
	"webhooks.workers":                       4,
	"webhooks.allow_loopback":                false,
	"webhooks.allow_networks":                []string{},
	"webhooks.timeout":                       "10s",
	"webhooks.poll":                          "500ms",
	"webhooks.backoff_min":                   "5s",
	"webhooks.backoff_max":                   "1h",
	"webhooks.horizon":                       "24h",
	"webhooks.retention":                     "168h",
	"webhooks.scope":                         "",
}

// Load reads the YAML file at path (none when path is empty; then ./memgate.yaml if it
// exists), applies MEMGATE_* environment variables over it, fills the derived defaults
// and validates the result.
func Load(path string) (*Config, error) {
	v := viper.New()
	for key, value := range defaults {
		v.SetDefault(key, value)
	}
	v.SetEnvPrefix("MEMGATE")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()

	if path == "" {
		if _, err := os.Stat("memgate.yaml"); err == nil {
			path = "memgate.yaml"
		}
	}
	if path != "" {
		v.SetConfigFile(path)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("config: read %s: %w", path, err)
		}
	}
	if err := unknownEnv(); err != nil {
		return nil, err
	}
	raw, err := fileMap(path)
	if err != nil {
		return nil, err
	}
	if err := foldedKeys(raw, ""); err != nil {
		return nil, err
	}
	if err := unknownFields(v, raw); err != nil {
		return nil, err
	}
	if path != "" {
		if err := unknownKeys(v); err != nil {
			return nil, err
		}
	}

	var c Config
	if err := v.Unmarshal(&c, func(dc *mapstructure.DecoderConfig) { dc.TagName = "yaml" }); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c.fillDerived()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// envName is the environment variable that sets key: MEMGATE_ and the key in upper
// case, its dots as underscores (llm.base_url: MEMGATE_LLM_BASE_URL).
func envName(key string) string {
	return "MEMGATE_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// ClientKeyVariable holds the key memgate's client commands (import, export, loadtest)
// send; it is no setting of the service, and the one other MEMGATE_ variable.
const ClientKeyVariable = "MEMGATE_CLIENT_KEY"

// unknownEnv refuses MEMGATE_ environment variables that name no setting: a misspelt
// one must not silently leave a default in place. Each is named with the nearest
// known variable when one is close.
func unknownEnv() error {
	known := []string{ClientKeyVariable}
	for key := range defaults {
		known = append(known, envName(key))
	}
	var problems []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "MEMGATE_") || slices.Contains(known, name) {
			continue
		}
		problem := name + " names no setting"
		if near := nearest(name, known); near != "" {
			problem += " (did you mean " + near + "?)"
		}
		problems = append(problems, problem)
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return fmt.Errorf("config: unknown environment variables: %s", strings.Join(problems, "; "))
}

// nearest is the name of names closest to name by edit distance, when a third of
// name's letters or fewer differ; else "".
func nearest(name string, names []string) string {
	best, bestDistance := "", len(name)/3+1
	for _, n := range slices.Sorted(slices.Values(names)) {
		if d := editDistance(name, n); d < bestDistance {
			best, bestDistance = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diagonal := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			diagonal, row[j] = row[j], min(row[j]+1, row[j-1]+1, diagonal+cost)
		}
	}
	return row[len(b)]
}

// unknownKeys refuses keys the file sets that memgate does not know: a typo must not
// silently fall back to a default.
func unknownKeys(v *viper.Viper) error {
	var unknown []string
	for _, key := range v.AllKeys() {
		if _, ok := defaults[key]; ok {
			continue
		}
		unknown = append(unknown, key)
	}
	if len(unknown) > 0 {
		return fmt.Errorf("config: unknown keys: %s", strings.Join(unknown, ", "))
	}
	return nil
}

// listEntries are the keys whose value is a list of entries, with the struct each
// entry decodes into. unknownKeys sees such a list as one value, and decoding drops an
// entry's fields its struct lacks, so unknownFields checks the entries.
var listEntries = map[string]reflect.Type{
	"auth.keys":               reflect.TypeFor[access.KeySpec](),
	"ingest.entity_types":     reflect.TypeFor[EntityType](),
	"ingest.edge_types":       reflect.TypeFor[EdgeType](),
	"memory.visibility_rules": reflect.TypeFor[VisibilityRule](),
}

// unknownFields refuses a list entry's field that memgate does not know (a misspelt
// requesters would leave a trusted key free to name anyone), naming the entry and
// listing the fields it has; and a list given as anything but a list of entries in the
// file: a single map (which decoding would take as a one-entry list) or an environment
// variable.
func unknownFields(v *viper.Viper, raw map[string]any) error {
	var problems []string
	for _, key := range slices.Sorted(maps.Keys(listEntries)) {
		fields := yamlFields(listEntries[key])
		env := envName(key)
		if os.Getenv(env) != "" {
			problems = append(problems, fmt.Sprintf("%s: is a list of entries, set only in the configuration file, not by %s", key, env))
			continue
		}
		// The file as written: viper folds the case of an entry's field names, so an
		// "Admin: true" beside "admin: false" would silently win.
		value := v.Get(key)
		if written := fileValue(raw, key); written != nil {
			value = written
		}
		switch list := value.(type) {
		case nil, []map[string]any: // unset: the default, an empty list
		case []any:
			for i, entry := range list {
				m, ok := entry.(map[string]any)
				if !ok {
					problems = append(problems, fmt.Sprintf("%s[%d]: must be an entry with the fields %s", key, i, strings.Join(fields, ", ")))
					continue
				}
				problems = append(problems, entryFields(fmt.Sprintf("%s[%d]", key, i), m, listEntries[key])...)
			}
		default:
			problems = append(problems, fmt.Sprintf("%s: must be a list of entries, each starting \"- %s:\"", key, fields[0]))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New("config: " + strings.Join(problems, "\nconfig: "))
}

// entryFields are the problems of one list entry m of struct t, named key: fields t
// lacks, and the same in its own lists of entries (an entity type's attributes).
func entryFields(key string, m map[string]any, t reflect.Type) []string {
	var problems []string
	fields := yamlFields(t)
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(fields, name) {
			problems = append(problems, fmt.Sprintf("%s: unknown field %q; known fields: %s",
				key, name, strings.Join(fields, ", ")))
			continue
		}
		f, _ := fieldByYAML(t, name)
		if f.Kind() != reflect.Slice || f.Elem().Kind() != reflect.Struct || m[name] == nil {
			continue
		}
		list, ok := m[name].([]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s.%s: must be a list of entries", key, name))
			continue
		}
		for j, entry := range list {
			sub, ok := entry.(map[string]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s.%s[%d]: must be an entry with the fields %s",
					key, name, j, strings.Join(yamlFields(f.Elem()), ", ")))
				continue
			}
			problems = append(problems, entryFields(fmt.Sprintf("%s.%s[%d]", key, name, j), sub, f.Elem())...)
		}
	}
	return problems
}

// fieldByYAML is the type of t's field named name in the file.
func fieldByYAML(t reflect.Type, name string) (reflect.Type, bool) {
	for f := range t.Fields() {
		if n, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); n == name {
			return f.Type, true
		}
	}
	return nil, false
}

// fileMap is the configuration file as written, or nil without one.
func fileMap(path string) (map[string]any, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	raw := map[string]any{}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	return raw, nil
}

// foldedKeys refuses a key of the file written in other than lower case: viper reads
// keys regardless of case, so a "Memory:" section beside "memory:" would silently
// replace it (its visibility rules gone), "Keys:" beside "keys:" the host keys.
// List entries are checked apart (unknownFields), as written.
func foldedKeys(raw map[string]any, prefix string) error {
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if k != strings.ToLower(k) {
			return fmt.Errorf("config: %s%s: keys are written in lower case (%s%s)", prefix, k, prefix, strings.ToLower(k))
		}
		if m, ok := raw[k].(map[string]any); ok {
			if err := foldedKeys(m, prefix+k+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

// fileValue is the value of a dotted key in the file as written (in lower case, as
// foldedKeys made sure), or nil.
func fileValue(raw map[string]any, key string) any {
	var cur any = raw
	for _, part := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// yamlFields are the names of t's fields in the file, in their order.
func yamlFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// fillDerived resolves the defaults that depend on other keys.
func (c *Config) fillDerived() {
	for i := range c.Memory.VisibilityRules {
		if c.Memory.VisibilityRules[i].Name == "" {
			c.Memory.VisibilityRules[i].Name = fmt.Sprintf("visibility_rules[%d]", i)
		}
	}
	if c.LLM.Provider == "" {
		c.LLM.Provider = ProviderHeuristic
		if c.LLM.BaseURL != "" || c.LLM.APIKey != "" {
			c.LLM.Provider = ProviderOpenAI
		}
	}
	if c.Embedder.Provider == "" {
		c.Embedder.Provider = ProviderHashing
		if c.Embedder.BaseURL != "" || c.Embedder.APIKey != "" {
			c.Embedder.Provider = ProviderOpenAI
		}
	}
	if c.Embedder.Dimensions == 0 {
		c.Embedder.Dimensions = 256
		if c.Embedder.Provider == ProviderOpenAI {
			c.Embedder.Dimensions = 1536
		}
	}
	c.Log.Level = strings.ToLower(c.Log.Level)
	c.Log.Format = strings.ToLower(c.Log.Format)
}

// Validate checks every key and reports all problems at once, each naming its key.
func (c *Config) Validate() error {
	var problems []string
	add := func(key, format string, args ...any) {
		problems = append(problems, key+": "+fmt.Sprintf(format, args...))
	}

	host, _, err := net.SplitHostPort(c.Server.Addr)
	if err != nil {
		add("server.addr", "%q is not host:port (%v)", c.Server.Addr, err)
	} else if len(c.Auth.Keys) == 0 && !c.Auth.JWT.Enabled() && !IsLoopback(host) {
		add("server.addr", "%q is not a loopback address and auth.keys is empty; configure host keys or bind to 127.0.0.1", c.Server.Addr)
	}
	if c.Server.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.Server.MetricsAddr); err != nil {
			add("server.metrics_addr", "%q is not host:port (%v)", c.Server.MetricsAddr, err)
		} else if c.Server.MetricsAddr == c.Server.Addr {
			add("server.metrics_addr", "is server.addr; leave it empty to serve /metrics there")
		}
	}
	if k := c.Server.MetricsKeySHA256; k != "" {
		if b, err := hex.DecodeString(k); err != nil || len(b) != 32 {
			add("server.metrics_key_sha256", "must be the SHA-256 of the key, 64 hex characters")
		}
	}
	for key, d := range map[string]time.Duration{
		"server.read_header_timeout": c.Server.ReadHeaderTimeout,
		"server.read_timeout":        c.Server.ReadTimeout,
		"server.write_timeout":       c.Server.WriteTimeout,
		"server.handler_timeout":     c.Server.HandlerTimeout,
		"server.shutdown_timeout":    c.Server.ShutdownTimeout,
		"neo4j.connect_timeout":      c.Neo4j.ConnectTimeout,
		"neo4j.max_retry_time":       c.Neo4j.MaxRetryTime,
		"llm.timeout":                c.LLM.Timeout,
		"embedder.timeout":           c.Embedder.Timeout,
		"ingest.lease":               c.Ingest.Lease,
		"ingest.poll":                c.Ingest.Poll,
		"webhooks.timeout":           c.Webhooks.Timeout,
		"webhooks.poll":              c.Webhooks.Poll,
		"webhooks.backoff_min":       c.Webhooks.BackoffMin,
		"webhooks.backoff_max":       c.Webhooks.BackoffMax,
		"webhooks.horizon":           c.Webhooks.Horizon,
		"webhooks.retention":         c.Webhooks.Retention,
		"auth.jwt.refresh":           c.Auth.JWT.Refresh,
	} {
		if d <= 0 {
			add(key, "must be a positive duration such as 5s, got %v", d)
		}
	}
	if _, err := ParseBytes(c.Server.BodyLimit); err != nil {
		add("server.body_limit", "%v", err)
	}
	if c.Server.RateLimit < 0 {
		add("server.rate_limit", "must be 0 (no limit) or a positive number of requests per second, got %v", c.Server.RateLimit)
	}
	if c.Server.RateLimit > 0 && c.Server.RateBurst < 1 {
		add("server.rate_burst", "must be at least 1 when server.rate_limit is set, got %d", c.Server.RateBurst)
	}

	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		add("log.level", "unknown level %q; use debug, info, warn or error", c.Log.Level)
	}
	switch c.Log.Format {
	case "json", "text":
	default:
		add("log.format", "unknown format %q; use json or text", c.Log.Format)
	}

	if u, err := url.Parse(c.Neo4j.URI); err != nil || u.Host == "" {
		add("neo4j.uri", "%q is not a URI such as bolt://127.0.0.1:7687", c.Neo4j.URI)
	} else {
		switch u.Scheme {
		case "bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc":
		default:
			add("neo4j.uri", "scheme %q is not one of bolt, bolt+s, bolt+ssc, neo4j, neo4j+s, neo4j+ssc", u.Scheme)
		}
	}
	if c.Neo4j.Database == "" {
		add("neo4j.database", "must not be empty")
	}
	if c.Neo4j.MaxPoolSize < 1 {
		add("neo4j.max_pool_size", "must be at least 1, got %d", c.Neo4j.MaxPoolSize)
	}

	for _, p := range access.CheckKeys(c.Auth.Keys) {
		add(fmt.Sprintf("auth.keys[%d].%s", p.Index, p.Field), "%s", p.Message)
	}
	if j := c.Auth.JWT; j.Enabled() || j.Audience != "" || j.JWKSFile != "" || j.JWKSURL != "" {
		if j.Issuer == "" {
			add("auth.jwt.issuer", "is required with the other auth.jwt settings")
		}
		if j.Audience == "" {
			add("auth.jwt.audience", "is required: the aud a token must carry")
		}
		switch {
		case (j.JWKSFile == "") == (j.JWKSURL == ""):
			add("auth.jwt.jwks_file", "set one of auth.jwt.jwks_file and auth.jwt.jwks_url")
		case j.JWKSURL != "":
			u, err := url.Parse(j.JWKSURL)
			if err != nil || u.Host == "" || !(u.Scheme == "https" || (u.Scheme == "http" && IsLoopback(u.Hostname()))) {
				add("auth.jwt.jwks_url", "%q must be an https URL (http only on loopback)", j.JWKSURL)
			}
		}
		if j.Claim == "" {
			add("auth.jwt.claim", "must name the claim that holds the requester id")
		}
		if j.RequesterPrefix != "" && access.CheckBinding(j.RequesterPrefix+"*") != nil {
			add("auth.jwt.requester_prefix", "%q cannot start a requester id (^[a-z0-9][a-z0-9_-]{0,62}$)", j.RequesterPrefix)
		}
	}

	checkProvider := func(key, provider, offline, baseURL string) {
		switch provider {
		case ProviderOpenAI:
			if baseURL != "" {
				if u, err := url.Parse(baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					add(strings.TrimSuffix(key, "provider")+"base_url", "%q is not an http(s) URL", baseURL)
				}
			}
		case offline:
		default:
			add(key, "unknown provider %q; use %s or %s", provider, ProviderOpenAI, offline)
		}
	}
	checkProvider("llm.provider", c.LLM.Provider, ProviderHeuristic, c.LLM.BaseURL)
	checkProvider("embedder.provider", c.Embedder.Provider, ProviderHashing, c.Embedder.BaseURL)
	if c.LLM.MaxConcurrency < 1 {
		add("llm.max_concurrency", "must be at least 1, got %d", c.LLM.MaxConcurrency)
	}
	if c.LLM.MaxRetries < 0 {
		add("llm.max_retries", "must not be negative, got %d", c.LLM.MaxRetries)
	}
	if c.Embedder.Dimensions < 1 || c.Embedder.Dimensions > 4096 {
		add("embedder.dimensions", "must be between 1 and 4096, got %d", c.Embedder.Dimensions)
	}

	switch c.Memory.DefaultVisibility {
	case "private", "public":
		if c.Memory.DefaultVisibility == "private" && !c.Memory.AllowPrivate {
			add("memory.default_visibility", "is private but memory.allow_private is false")
		}
	default:
		add("memory.default_visibility", "unknown visibility %q; use private or public", c.Memory.DefaultVisibility)
	}
	positive := map[string]int{
		"memory.max_content_bytes": c.Memory.MaxContentBytes,
		"memory.batch_max_items":   c.Memory.BatchMaxItems,
		"memory.page_size_default": c.Memory.PageSizeDefault,
		"memory.page_size_max":     c.Memory.PageSizeMax,
		"memory.max_versions":      c.Memory.MaxVersions,
		"ingest.max_attempts":      c.Ingest.MaxAttempts,
		"llm.max_tokens":           c.LLM.MaxTokens,
	}
	if !slices.Contains(StructuredOutputs, c.LLM.StructuredOutput) {
		add("llm.structured_output", "unknown mode %q; use one of %s", c.LLM.StructuredOutput, strings.Join(StructuredOutputs, ", "))
	}
	if c.Memory.Conflicts != "invalidate" && c.Memory.Conflicts != "review" {
		add("memory.conflicts", "unknown mode %q; use invalidate or review", c.Memory.Conflicts)
	}
	for key, n := range positive {
		if n < 1 {
			add(key, "must be at least 1, got %d", n)
		}
	}
	if c.Memory.PageSizeDefault > c.Memory.PageSizeMax {
		add("memory.page_size_default", "%d is above memory.page_size_max %d", c.Memory.PageSizeDefault, c.Memory.PageSizeMax)
	}
	if c.Webhooks.Workers < 0 {
		add("webhooks.workers", "must not be negative, got %d", c.Webhooks.Workers)
	}
	for i, n := range c.Webhooks.AllowNetworks {
		if _, err := parseNetwork(n); err != nil {
			add(fmt.Sprintf("webhooks.allow_networks[%d]", i), "%q is neither a CIDR network nor an address", n)
		}
	}
	if c.Webhooks.BackoffMin > c.Webhooks.BackoffMax {
		add("webhooks.backoff_min", "%v is above webhooks.backoff_max %v", c.Webhooks.BackoffMin, c.Webhooks.BackoffMax)
	}
	if c.Ingest.Workers < 0 {
		add("ingest.workers", "must not be negative, got %d", c.Ingest.Workers)
	}
	c.validateOntology(add)
	if c.Ingest.Backoff < 0 {
		add("ingest.backoff", "must not be negative, got %v", c.Ingest.Backoff)
	}
	if c.Limits.PublicWritesPerAgentPerDay < 0 {
		add("limits.public_writes_per_agent_per_day", "must not be negative, got %d", c.Limits.PublicWritesPerAgentPerDay)
	}
	for i, r := range c.Memory.VisibilityRules {
		key := fmt.Sprintf("memory.visibility_rules[%d]", i)
		if _, err := regexp.Compile(r.Pattern); err != nil || r.Pattern == "" {
			add(key+".pattern", "%q is not an RE2 pattern", r.Pattern)
		}
		switch {
		case r.Visibility != "private":
			add(key+".visibility", "%q: a rule may only narrow a write to private", r.Visibility)
		case !c.Memory.AllowPrivate:
			add(key+".visibility", "is private but memory.allow_private is false")
		}
		if len(r.Name) > 64 {
			add(key+".name", "is longer than 64 bytes")
		}
	}
	if c.Memory.ExpirySweep < 0 {
		add("memory.expiry_sweep", "must not be negative, got %v", c.Memory.ExpirySweep)
	}

	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return errors.New("config: invalid:\n  " + strings.Join(problems, "\n  "))
}

// validateOntology checks ingest.entity_types and ingest.edge_types: names, attribute
// names (none a property memgate or Graphiti uses), types, enum values, and the end
// types of edge types (declared entity types, or the built-in ones when none are).
func (c *Config) validateOntology(add func(key, format string, args ...any)) {
	labels := map[string]bool{}
	for i, t := range c.Ingest.EntityTypes {
		key := fmt.Sprintf("ingest.entity_types[%d]", i)
		switch {
		case slices.Contains(reservedLabels, t.Name):
			add(key+".name", "%q is a label memgate or Graphiti gives nodes itself; choose another name", t.Name)
		case !labelPattern.MatchString(t.Name) || labels[t.Name]:
			add(key+".name", "%q must be a distinct label such as Person: a capital letter, then letters and digits", t.Name)
		}
		labels[t.Name] = true
		if len([]rune(t.Description)) > graph.MaxTypeDescriptionRunes {
			add(key+".description", "is longer than %d characters", graph.MaxTypeDescriptionRunes)
		}
		validateAttributes(key, t.Attributes, add)
	}
	if len(c.Ingest.EntityTypes) == 0 {
		for _, name := range DefaultEntityTypeNames {
			labels[name] = true
		}
	}
	edges := map[string]bool{}
	for i, t := range c.Ingest.EdgeTypes {
		key := fmt.Sprintf("ingest.edge_types[%d]", i)
		if problem := graph.CheckEdgeTypeName(t.Name); problem != "" {
			add(key+".name", "%s", problem)
		} else if edges[t.Name] {
			add(key+".name", "%q is declared twice", t.Name)
		}
		edges[t.Name] = true
		if len([]rune(t.Description)) > graph.MaxTypeDescriptionRunes {
			add(key+".description", "is longer than %d characters", graph.MaxTypeDescriptionRunes)
		}
		for field, ends := range map[string][]string{"source_types": t.SourceTypes, "target_types": t.TargetTypes} {
			for j, end := range ends {
				if !labels[end] {
					add(fmt.Sprintf("%s.%s[%d]", key, field, j), "%q is not an entity type of ingest.entity_types", end)
				}
			}
		}
		validateAttributes(key, t.Attributes, add)
	}
}

// DefaultEntityTypeNames are the built-in entity types (extract.DefaultEntityTypes),
// which an edge type may join when ingest.entity_types names none.
var DefaultEntityTypeNames = []string{"Person", "Organization", "Location", "Event", "Product", "Concept"}

// reservedLabels are labels memgate gives nodes itself.
var reservedLabels = []string{"Entity", "Episodic", "Community", "Agent", "Team", "Conflict", "Principal",
	"MemoryVersion", "MemgateSchema", "AuditEvent", "Webhook", "WebhookDelivery", "Saga"}

func validateAttributes(key string, attrs []Attribute, add func(key, format string, args ...any)) {
	if len(attrs) > graph.MaxAttributes {
		add(key+".attributes", "has %d attributes; at most %d", len(attrs), graph.MaxAttributes)
	}
	names := map[string]bool{}
	for j, a := range attrs {
		akey := fmt.Sprintf("%s.attributes[%d]", key, j)
		if problem := graph.CheckAttributeName(a.Name); problem != "" {
			add(akey+".name", "%s", problem)
		} else if names[a.Name] {
			add(akey+".name", "%q is declared twice", a.Name)
		}
		names[a.Name] = true
		if !slices.Contains(graph.AttributeTypes, a.Type) {
			add(akey+".type", "unknown type %q; use one of %s", a.Type, strings.Join(graph.AttributeTypes, ", "))
		}
		if len([]rune(a.Description)) > graph.MaxTypeDescriptionRunes {
			add(akey+".description", "is longer than %d characters", graph.MaxTypeDescriptionRunes)
		}
		switch {
		case a.Type == graph.AttrEnum && len(a.Values) == 0:
			add(akey+".values", "an enum needs its values")
		case a.Type != graph.AttrEnum && len(a.Values) > 0:
			add(akey+".values", "only an enum has values")
		case len(a.Values) > graph.MaxEnumValues:
			add(akey+".values", "has %d values; at most %d", len(a.Values), graph.MaxEnumValues)
		}
		seen := map[string]bool{}
		for k, v := range a.Values {
			if strings.TrimSpace(v) == "" || len([]rune(v)) > 100 || seen[strings.ToLower(v)] {
				add(fmt.Sprintf("%s.values[%d]", akey, k), "%q must be a distinct value of 1 to 100 characters", v)
			}
			seen[strings.ToLower(v)] = true
		}
	}
}

// labelPattern is the rule for entity type names, which become Neo4j labels.
var labelPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,39}$`)

// IsLoopback reports whether host (a name or an IP, no port) is the loopback
// interface. An empty host means every interface, which is not loopback.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ParseBytes parses a size such as 512K, 2M or 1048576 into bytes.
func ParseBytes(s string) (int64, error) {
	orig := s
	s = strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	var n int64
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != s {
		return 0, fmt.Errorf("%q is not a size such as 512K or 2M", orig)
	}
	return n * mult, nil
}

// Redacted returns a copy safe to print: passwords and API keys are masked, host key
// hashes shortened.
func (c *Config) Redacted() *Config {
	r := *c
	mask := func(s string) string {
		if s == "" {
			return ""
		}
		return "********"
	}
	r.Neo4j.Password = mask(c.Neo4j.Password)
	r.LLM.APIKey = mask(c.LLM.APIKey)
	r.Embedder.APIKey = mask(c.Embedder.APIKey)
	r.Auth.Keys = make([]access.KeySpec, len(c.Auth.Keys))
	for i, k := range c.Auth.Keys {
		if len(k.SHA256) > 8 {
			k.SHA256 = k.SHA256[:8] + "…"
		}
		r.Auth.Keys[i] = k
	}
	return &r
}

// YAML renders c as YAML, the format Load reads.
func (c *Config) YAML() ([]byte, error) {
	return yaml.Marshal(c)
}

// Get returns one setting of the redacted configuration by its dotted key
// (neo4j.uri), as memgate config --get prints it for scripts, or an error when the key
// names no setting or a group of settings.
func (c *Config) Get(key string) (string, error) {
	b, err := c.Redacted().YAML()
	if err != nil {
		return "", err
	}
	var node any
	if err := yaml.Unmarshal(b, &node); err != nil {
		return "", err
	}
	for _, part := range strings.Split(key, ".") {
		m, ok := node.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%s is not a setting", key)
		}
		if node, ok = m[part]; !ok {
			return "", fmt.Errorf("%s is not a setting", key)
		}
	}
	switch node.(type) {
	case nil:
		return "", nil
	case map[string]any, []any:
		return "", fmt.Errorf("%s is a group of settings, not one", key)
	}
	return fmt.Sprint(node), nil
}

// Networks are webhooks.allow_networks as prefixes (an address alone is the prefix of
// that one address). Validate has refused any that does not parse.
func (w Webhooks) Networks() []netip.Prefix {
	var out []netip.Prefix
	for _, n := range w.AllowNetworks {
		if p, err := parseNetwork(n); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func parseNetwork(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	return p.Masked(), err
}
