package graph

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// EntityType is a kind of entity extraction may assign: its name becomes a node label
// beside Entity, and each of its attributes a property of the node (Graphiti's custom
// entity types).
type EntityType struct {
	Name        string
	Description string
	Attributes  []Attribute
}

// EdgeType is a kind of relation between entities of given types: a fact of it is the
// RELATES_TO edge named Name, and each of its attributes a property of the edge
// (Graphiti's custom edge types). Empty SourceTypes or TargetTypes allow any type.
type EdgeType struct {
	Name        string
	Description string
	SourceTypes []string
	TargetTypes []string
	Attributes  []Attribute
}

// Attribute is a typed property of an entity or edge type.
type Attribute struct {
	Name        string
	Type        string // one of AttributeTypes
	Description string
	Values      []string // the allowed values of an enum
}

// Attribute types. A date is stored as a Neo4j date (what Graphiti's loader reads as
// a Python date); a number as a float, or an integer when the value is whole.
const (
	AttrString  = "string"
	AttrNumber  = "number"
	AttrBoolean = "boolean"
	AttrDate    = "date"
	AttrEnum    = "enum"
)

// AttributeTypes are the types an attribute may have.
var AttributeTypes = []string{AttrString, AttrNumber, AttrBoolean, AttrDate, AttrEnum}

// Bounds of a declared ontology and of the values extraction may give.
const (
	MaxAttributes           = 20  // per type
	MaxAttributeValueRunes  = 200 // a string attribute's value
	MaxEnumValues           = 50
	MaxTypeDescriptionRunes = 300
	MaxAttributeHistory     = 50 // entries of an entity's AttributeHistory
	// MaxExtractionInstructions bounds a memory's extraction_instructions, in characters.
	MaxExtractionInstructions = 2000
)

var (
	attributeNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	edgeTypeNamePattern  = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,59}$`)
)

// ReservedAttributes are the property names of Entity nodes and RELATES_TO edges that
// memgate or Graphiti use themselves: an attribute may not take one (it would
// overwrite the property, or be read as it).
var ReservedAttributes = []string{
	// Graphiti's EntityNode and EntityEdge
	"uuid", "name", "group_id", "labels", "created_at", "name_embedding", "summary", "attributes",
	"source_node_uuid", "target_node_uuid", "fact", "fact_embedding", "episodes", "expired_at",
	"valid_at", "invalid_at", "reference_time",
	// memgate's
	"description", "name_terms", "name_words", "aliases", "supported_until", "org",
	"fact_terms", "valid_at_assumed", "overruled_valid_at", "conflicts", "note",
	"attribute_history",
}

// CheckAttributeName reports what is wrong with an attribute's name, or "".
func CheckAttributeName(name string) string {
	switch {
	case !attributeNamePattern.MatchString(name):
		return fmt.Sprintf("%q must be snake_case: a lower-case letter, then lower-case letters, digits and underscores (at most 40)", name)
	case slices.Contains(ReservedAttributes, name):
		return fmt.Sprintf("%q is a property memgate or Graphiti uses itself; choose another name", name)
	}
	return ""
}

// CheckEdgeTypeName reports what is wrong with an edge type's name, or "".
func CheckEdgeTypeName(name string) string {
	if !edgeTypeNamePattern.MatchString(name) {
		return fmt.Sprintf("%q must be SCREAMING_SNAKE_CASE such as PURCHASED", name)
	}
	return ""
}

// Value is v as attribute a holds it, and whether v is one: a string (cut to
// MaxAttributeValueRunes, control characters removed), a number (float64, or int64
// when whole), a boolean, a date (time.Time at midnight UTC, from YYYY-MM-DD or an
// RFC 3339 time), or one of an enum's values (matched without case). JSON numbers
// and booleans given as strings ("42", "true") are not taken: the answer said
// something else.
func (a Attribute) Value(v any) (any, bool) {
	switch a.Type {
	case AttrString:
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		s = CleanText(s, MaxAttributeValueRunes)
		return s, s != ""
	case AttrNumber:
		var f float64
		switch n := v.(type) {
		case float64:
			f = n
		case float32:
			f = float64(n)
		case int:
			f = float64(n)
		case int64:
			f = float64(n)
		default:
			return nil, false
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
		return f, true
	case AttrBoolean:
		b, ok := v.(bool)
		return b, ok
	case AttrDate:
		switch d := v.(type) {
		case time.Time:
			return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC), d.Year() >= 1000 && d.Year() <= 2999
		case string:
			d = strings.TrimSpace(d)
			t, err := time.Parse(time.DateOnly, d)
			if err != nil {
				t, err = time.Parse(time.RFC3339, d)
			}
			if err != nil || t.Year() < 1000 || t.Year() > 2999 {
				return nil, false
			}
			return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), true
		}
		return nil, false
	case AttrEnum:
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		for _, allowed := range a.Values {
			if strings.EqualFold(strings.TrimSpace(s), allowed) {
				return allowed, true
			}
		}
	}
	return nil, false
}

// AttributeJSON is an attribute value as JSON shows it: a date as YYYY-MM-DD, the
// rest as they are.
func AttributeJSON(v any) any {
	if t, ok := v.(time.Time); ok {
		return t.Format(time.DateOnly)
	}
	return v
}

// Ontology is the entity and edge types that apply to a space: the deployment's
// (ingest.entity_types, ingest.edge_types), or the fewer a space's owner chose.
type Ontology struct {
	EntityTypes []EntityType
	EdgeTypes   []EdgeType
}

// EntityType is the entity type named name (without regard to case), or nil.
func (o Ontology) EntityType(name string) *EntityType {
	for i := range o.EntityTypes {
		if strings.EqualFold(strings.TrimSpace(name), o.EntityTypes[i].Name) {
			return &o.EntityTypes[i]
		}
	}
	return nil
}

// EdgeType is the edge type named name, or nil.
func (o Ontology) EdgeType(name string) *EdgeType {
	for i := range o.EdgeTypes {
		if name == o.EdgeTypes[i].Name {
			return &o.EdgeTypes[i]
		}
	}
	return nil
}

// Allows reports whether a fact of e may join an entity of type src to one of type tgt
// ("" when the entity has no type). A listed end type must be matched exactly.
func (e EdgeType) Allows(src, tgt string) bool {
	return (len(e.SourceTypes) == 0 || slices.Contains(e.SourceTypes, src)) &&
		(len(e.TargetTypes) == 0 || slices.Contains(e.TargetTypes, tgt))
}

// SpaceTypes are the entity and edge types that apply to one space, by name, as its
// owner (an agent's owner, a team's writer) chose them: a nil list is all of the
// deployment's, an empty one none. They only narrow: a space never has a type the
// deployment does not declare.
type SpaceTypes struct {
	EntityTypes []string
	EdgeTypes   []string
}

// TypesGuard names the agent or team whose space's types a request decided to set,
// as the decision read it: when it was created, and an agent's owner then ("" for a
// team). The types are set on that one only.
type TypesGuard struct {
	CreatedAt time.Time
	Owner     string
}

// MaxSpaceTypes bounds the names a space's types list.
const MaxSpaceTypes = 200

// Narrow is the part of o a space keeps when its owner names the entity and edge
// types that apply to it (see SpaceTypes). A name o does not declare is EINVALID
// naming it: a space narrows the deployment's types, it never adds any. An edge type
// named needs its end types kept; of the edge types a nil list keeps, those joining a
// type left out go.
func (o Ontology) Narrow(entityTypes, edgeTypes []string) (Ontology, error) {
	for _, name := range entityTypes {
		if t := o.EntityType(name); t == nil || t.Name != name {
			return Ontology{}, Errorf(EINVALID, "entity_types: %q is not one of the deployment's entity types", name)
		}
	}
	for _, name := range edgeTypes {
		if o.EdgeType(name) == nil {
			return Ontology{}, Errorf(EINVALID, "edge_types: %q is not one of the deployment's edge types", name)
		}
	}
	out := o.Within(&SpaceTypes{EntityTypes: entityTypes})
	for _, name := range edgeTypes {
		if out.EdgeType(name) == nil {
			return Ontology{}, Errorf(EINVALID, "edge_types: %s joins a type entity_types leaves out", name)
		}
	}
	if edgeTypes != nil {
		out = out.Within(&SpaceTypes{EdgeTypes: edgeTypes})
	}
	return out, nil
}

// Within is the part of o the space's types t keep (nil: all of o); a name o does not
// declare (any more: the configuration changed since) is passed over, and so is an
// edge type joining an entity type left out.
func (o Ontology) Within(t *SpaceTypes) Ontology {
	if t == nil {
		return o
	}
	out := o
	if t.EntityTypes != nil {
		out.EntityTypes = slices.DeleteFunc(slices.Clone(o.EntityTypes), func(e EntityType) bool { return !slices.Contains(t.EntityTypes, e.Name) })
	}
	if t.EdgeTypes != nil {
		out.EdgeTypes = slices.DeleteFunc(slices.Clone(o.EdgeTypes), func(e EdgeType) bool { return !slices.Contains(t.EdgeTypes, e.Name) })
	}
	out.EdgeTypes = slices.DeleteFunc(slices.Clone(out.EdgeTypes), func(e EdgeType) bool {
		return slices.ContainsFunc(slices.Concat(e.SourceTypes, e.TargetTypes), func(end string) bool { return out.EntityType(end) == nil })
	})
	return out
}

// GenericRelation is the relation a fact keeps when the edge type it was given does
// not join the types of its ends (Graphiti's default edge name): it is never retyped.
const GenericRelation = "RELATES_TO"

// AttributeChange is one entry of an entity's attribute history: a value of an
// attribute, when it was first stated (the stating episode's reference time), and the
// episodes that stated it then. The newest entry of an attribute is its value; the
// others are what it was before.
type AttributeChange struct {
	Name     string    `json:"name"`
	Type     string    `json:"type"`  // the attribute's type, so the value reads back typed
	Value    any       `json:"value"` // as AttributeJSON gives it
	At       time.Time `json:"at"`
	Episodes []string  `json:"episodes"`
}

// State records that episode, of reference time at, states the attribute name's
// value v (as Attribute.Value gives it: a string, int64, float64, bool or time.Time):
// the newer statement wins. A value equal to the one the
// attribute had at that time adds the episode to that entry; another adds an entry,
// which is the attribute's value when it is the newest. A re-run of the same episode
// changes nothing. The history keeps at most MaxAttributeHistory entries, the oldest
// of attributes with several going first.
func (n *EntityNode) State(name string, v any, at time.Time, episode string) {
	a := Attribute{Name: name, Type: AttrString}
	switch v.(type) {
	case int64, float64:
		a.Type = AttrNumber
	case bool:
		a.Type = AttrBoolean
	case time.Time:
		a.Type = AttrDate
	}
	at = at.UTC()
	jv := AttributeJSON(v)
	var before *AttributeChange // the entry in force at `at`
	for i := range n.AttributeHistory {
		c := &n.AttributeHistory[i]
		if c.Name == a.Name && !c.At.After(at) && (before == nil || !c.At.Before(before.At)) {
			before = c
		}
	}
	for i := range n.AttributeHistory {
		c := &n.AttributeHistory[i]
		if c.Name == a.Name && slices.Contains(c.Episodes, episode) && sameValue(c.Value, jv) {
			return // this episode said so already
		}
	}
	if before != nil && sameValue(before.Value, jv) {
		before.Episodes = append(before.Episodes, episode)
	} else {
		n.AttributeHistory = append(n.AttributeHistory, AttributeChange{Name: a.Name, Type: a.Type, Value: jv, At: at,
			Episodes: []string{episode}})
	}
	n.trimHistory()
	n.Attributes = CurrentAttributes(n.AttributeHistory)
}

// Unstate takes the episodes gone out of the entity's attribute history: an entry no
// remaining episode states goes, and each attribute's value is its newest entry left
// (none: the attribute goes). It reports whether anything changed.
func (n *EntityNode) Unstate(gone func(episode string) bool) bool {
	changed := false
	kept := n.AttributeHistory[:0]
	for _, c := range n.AttributeHistory {
		eps := slices.DeleteFunc(slices.Clone(c.Episodes), gone)
		changed = changed || len(eps) != len(c.Episodes)
		if len(eps) > 0 {
			c.Episodes = eps
			kept = append(kept, c)
		}
	}
	n.AttributeHistory = kept
	n.Attributes = CurrentAttributes(kept)
	return changed
}

func (n *EntityNode) trimHistory() {
	h := n.AttributeHistory
	slices.SortStableFunc(h, func(a, b AttributeChange) int { return a.At.Compare(b.At) })
	for len(h) > MaxAttributeHistory {
		i := 0 // the oldest entry that is not its attribute's value
		for j := range h {
			if slices.ContainsFunc(h[j+1:], func(c AttributeChange) bool { return c.Name == h[j].Name }) {
				i = j
				break
			}
		}
		h = slices.Delete(h, i, i+1)
	}
	n.AttributeHistory = h
}

// CurrentAttributes are the values the history says the attributes have: each the
// newest entry of its attribute (the later one of two of the same time), typed as
// Attribute.Value gives them.
func CurrentAttributes(h []AttributeChange) map[string]any {
	if len(h) == 0 {
		return nil
	}
	out := map[string]any{}
	at := map[string]time.Time{}
	for _, c := range h {
		if t, ok := at[c.Name]; ok && c.At.Before(t) {
			continue
		}
		v, ok := Attribute{Type: c.Type, Values: []string{fmt.Sprint(c.Value)}}.Value(c.Value)
		if !ok {
			continue
		}
		out[c.Name], at[c.Name] = v, c.At
	}
	return out
}

// sameValue compares two values as AttributeJSON gives them (a JSON number read back
// is a float64; one just given may be an int64).
func sameValue(a, b any) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// EncodeHistory is the history as stored: one JSON text an entry, since a property
// holds no maps.
func EncodeHistory(h []AttributeChange) []string {
	out := make([]string, 0, len(h))
	for _, c := range h {
		b, err := json.Marshal(c)
		if err == nil {
			out = append(out, string(b))
		}
	}
	return out
}

// DecodeHistory reads a stored history; an entry that does not read is left out.
func DecodeHistory(texts []string) []AttributeChange {
	var out []AttributeChange
	for _, t := range texts {
		var c AttributeChange
		if json.Unmarshal([]byte(t), &c) == nil && c.Name != "" {
			out = append(out, c)
		}
	}
	return out
}
