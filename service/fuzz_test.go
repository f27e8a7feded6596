package service

import (
	"math"
	"regexp"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memgate/memgate/access"
	"github.com/memgate/memgate/graph"
)

var fuzzLimits = Limits{DefaultVisibility: "private", MaxContentBytes: 1 << 10, BatchMaxItems: 10, PageSizeDefault: 20, PageSizeMax: 100}

// FuzzValidateMemory checks what a new memory may be: anything it accepts lands in a
// space whose group_id parses back to it, with non-empty, valid UTF-8 content within
// the size limit; anything it refuses is a client error (invalid or too large).
func FuzzValidateMemory(f *testing.F) {
	f.Add("a", "", "", "hello", "", "", "user", "tag", "low", 0.5)
	f.Add("a", "team", "t", "", "hi", "", "user", "", "", 1.0)
	f.Add("a", "global", "", `{"k":1}`, "", "json", "", "", "high", math.NaN())
	f.Add("A", "public", "x", " ", "\x00", "text", "us:er", "a\nb", "urgent", -1.0)
	f.Fuzz(func(t *testing.T, agent, vis, team, text, message, source, role, tag, priority string, confidence float64) {
		s := &Service{Limits: fuzzLimits, Now: time.Now}
		m := &NewMemory{AgentID: agent, Visibility: vis, Team: team, Text: text, Source: source, Priority: priority,
			Confidence: &confidence}
		if message != "" {
			m.Messages = []graph.Message{{Role: role, Content: message}}
		}
		if tag != "" {
			m.Tags = []string{tag}
		}
		space, err := s.validate(Call{P: access.Principal{ID: "fuzzer"}}, m)
		if err != nil {
			if code := graph.ErrorCode(err); code != graph.EINVALID && code != graph.ETOOLARGE {
				t.Fatalf("refused with %s: %v", code, err)
			}
			return
		}
		if back, ok := graph.ParseGroupID(space.GroupID()); !ok || back != space {
			t.Fatalf("accepted into %+v, whose group_id %q does not parse back", space, space.GroupID())
		}
		content := renderContent(m)
		if content == "" || !utf8.ValidString(content) || len(content) > fuzzLimits.MaxContentBytes {
			t.Fatalf("accepted content %q", content)
		}
		if confidence < 0 || confidence > 1 || confidence != confidence {
			t.Fatalf("accepted confidence %v", confidence)
		}
	})
}

// FuzzCheckSearch checks the search request's bounds: an accepted query has a limit
// within the page size, a depth within the maximum (and only with a center), and at
// least one kind of result; a refused one is invalid.
func FuzzCheckSearch(f *testing.F) {
	f.Add("acme", "a", "facts", "", 0, "Person", "WORKS_AT", 10)
	f.Add("", "a", "", "7f3c9b9e-1111-4222-8333-444455556666", 2, "", "", 0)
	f.Add("x", "a", "nodes", "not-a-uuid", -1, "person", "works at", 1000)
	f.Fuzz(func(t *testing.T, query, agent, include, center string, depth int, typ, relation string, limit int) {
		s := &Service{Limits: fuzzLimits, Now: time.Now, Ontology: graph.Ontology{EntityTypes: []graph.EntityType{{Name: "Person"}}}}
		q := &SearchQuery{Query: query, AgentID: agent, Center: center, Depth: depth, Limit: limit}
		if include != "" {
			q.Include = []string{include}
		}
		if typ != "" {
			q.Types.EntityTypes = []string{typ}
		}
		if relation != "" {
			q.Filter.Relations = []string{relation}
		}
		kinds, n, err := s.checkSearch(q)
		if err != nil {
			if code := graph.ErrorCode(err); code != graph.EINVALID {
				t.Fatalf("refused with %s: %v", code, err)
			}
			return
		}
		if n < 1 || n > fuzzLimits.PageSizeMax {
			t.Fatalf("accepted with limit %d", n)
		}
		if len(kinds) == 0 || (q.Center == "" && q.Depth != 0) || q.Depth < 0 || q.Depth > maxDepth {
			t.Fatalf("accepted kinds %v, center %q, depth %d", kinds, q.Center, q.Depth)
		}
		if (typ != "" && typ != "Person") || len(q.Filter.EntityTypes) != len(q.Types.EntityTypes) {
			t.Fatalf("accepted entity type %q as %v: the deployment declares Person alone", typ, q.Filter.EntityTypes)
		}
		if len(q.Query) > maxQueryBytes || !graph.ValidID(q.AgentID) {
			t.Fatalf("accepted a %d-byte query for agent %q", len(q.Query), q.AgentID)
		}
	})
}

// documentedUUID is the form of memory, fact and entity ids (RFC 4122 text, either case).
var documentedUUID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// FuzzCheckUUID checks the id parser of the memory routes against the documented form:
// it accepts exactly the 36-character UUID text, and refuses everything else as not
// found (an id that cannot exist is not there).
func FuzzCheckUUID(f *testing.F) {
	for _, s := range []string{"7f3c9b9e-1111-4222-8333-444455556666", "7F3C9B9E-1111-4222-8333-444455556666",
		"{7f3c9b9e-1111-4222-8333-444455556666}", "urn:uuid:7f3c9b9e-1111-4222-8333-444455556666",
		"7f3c9b9e111142228333444455556666", "", "../x", "7f3c9b9e-1111-4222-8333-44445555666g"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := checkUUID(id)
		if (err == nil) != documentedUUID.MatchString(id) {
			t.Fatalf("checkUUID(%q) = %v; the documented form says %v", id, err, documentedUUID.MatchString(id))
		}
		if err != nil && graph.ErrorCode(err) != graph.ENOTFOUND {
			t.Fatalf("checkUUID(%q) = %v, want not found", id, err)
		}
	})
}
