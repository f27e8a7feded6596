package graph

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// TypeFilter narrows a read (search, context, the facts and entities lists) to the
// deployment's types: the store applies it in the same query that restricts to the
// visible set, so it can only take hits away. An entity qualifies when it has one of
// EntityTypes (any when empty) and every one of Attributes; a fact when its relation
// is one of EdgeTypes (any when empty), it has every one of EdgeAttributes, and one of
// its ends qualifies as an entity would (when EntityTypes or Attributes are given).
// EdgeTypes and EdgeAttributes do not narrow entities.
type TypeFilter struct {
	EntityTypes    []string
	EdgeTypes      []string
	Attributes     []AttributeFilter
	EdgeAttributes []AttributeFilter
}

// AttributeFilter asks for the property Name to equal one of Values: the forms the
// value asked for takes under the declarations of Name (a string, int64 or float64,
// bool, or time.Time for a date, as Attribute.Value gives them).
type AttributeFilter struct {
	Name   string
	Values []any
}

// AttributeText is an attribute value given as text (a URL's query), read by the
// declared attribute's type: a number's digits, true or false, a date YYYY-MM-DD.
type AttributeText string

// TypeQuery is a read's type and attribute filters as the requester gave them.
type TypeQuery struct {
	EntityTypes    []string
	EdgeTypes      []string
	Attributes     map[string]any // name: value (AttributeText from a query string)
	EdgeAttributes map[string]any
}

// MaxFilterValues bounds each list or map of a read's filters.
const MaxFilterValues = 20

// Filter checks q against the deployment's ontology o and gives the store's filter.
// EINVALID, naming the field: a type o does not declare (names are matched exactly,
// as labels are), more than MaxFilterValues of anything, an attribute that none of
// the types asked for declares (entity types: EntityTypes when given, else every
// entity type of o; edge types likewise), or a value that is not of the attribute's
// type. A filter on what o does not declare is refused rather than answered empty, so a
// misspelt filter is seen for what it is.
func (o Ontology) Filter(q TypeQuery) (TypeFilter, error) {
	var f TypeFilter
	switch {
	case len(q.EntityTypes) > MaxFilterValues, len(q.EdgeTypes) > MaxFilterValues,
		len(q.Attributes) > MaxFilterValues, len(q.EdgeAttributes) > MaxFilterValues:
		return f, Errorf(EINVALID, "entity_types, edge_types, attributes and edge_attributes take at most %d values each", MaxFilterValues)
	}
	var entityAttrs, edgeAttrs []Attribute
	for _, name := range q.EntityTypes {
		t := o.EntityType(name)
		if t == nil || t.Name != name {
			return f, Errorf(EINVALID, "entity_types: %q is not one of the deployment's entity types (%s)", name, entityTypeNames(o))
		}
		if !slices.Contains(f.EntityTypes, name) {
			f.EntityTypes = append(f.EntityTypes, name)
		}
		entityAttrs = append(entityAttrs, t.Attributes...)
	}
	if len(q.EntityTypes) == 0 {
		for _, t := range o.EntityTypes {
			entityAttrs = append(entityAttrs, t.Attributes...)
		}
	}
	for _, name := range q.EdgeTypes {
		t := o.EdgeType(name)
		if t == nil {
			return f, Errorf(EINVALID, "edge_types: %q is not one of the deployment's edge types", name)
		}
		if !slices.Contains(f.EdgeTypes, name) {
			f.EdgeTypes = append(f.EdgeTypes, name)
		}
		edgeAttrs = append(edgeAttrs, t.Attributes...)
	}
	if len(q.EdgeTypes) == 0 {
		for _, t := range o.EdgeTypes {
			edgeAttrs = append(edgeAttrs, t.Attributes...)
		}
	}
	var err error
	if f.Attributes, err = attributeFilters("attributes", q.Attributes, entityAttrs); err != nil {
		return TypeFilter{}, err
	}
	if f.EdgeAttributes, err = attributeFilters("edge_attributes", q.EdgeAttributes, edgeAttrs); err != nil {
		return TypeFilter{}, err
	}
	return f, nil
}

// attributeFilters reads the equality filters asked for in field against the
// attributes declared; sorted by name, so a query's parameters do not depend on a
// map's order.
func attributeFilters(field string, asked map[string]any, declared []Attribute) ([]AttributeFilter, error) {
	var out []AttributeFilter
	for _, name := range slices.Sorted(maps.Keys(asked)) {
		v := asked[name]
		af := AttributeFilter{Name: name}
		found := false
		for _, a := range declared {
			if a.Name != name {
				continue
			}
			found = true
			typed, ok := a.Value(textValue(a, v))
			if ok && !slices.ContainsFunc(af.Values, func(x any) bool { return valueKey(x) == valueKey(typed) }) {
				af.Values = append(af.Values, typed)
			}
		}
		switch {
		case !found:
			return nil, Errorf(EINVALID, "%s: %q is not an attribute the types asked for declare", field, name)
		case len(af.Values) == 0:
			return nil, Errorf(EINVALID, "%s: %s: %s is not a value of its type (%s)", field, name, describeValue(v), attributeTypes(declared, name))
		}
		out = append(out, af)
	}
	return out, nil
}

// textValue is v as a JSON value of a's type when it is AttributeText: "42" a number,
// "true" a boolean; otherwise v itself.
func textValue(a Attribute, v any) any {
	s, ok := v.(AttributeText)
	if !ok {
		return v
	}
	switch a.Type {
	case AttrNumber:
		if n, err := strconv.ParseFloat(strings.TrimSpace(string(s)), 64); err == nil {
			return n
		}
		return nil
	case AttrBoolean:
		switch string(s) {
		case "true":
			return true
		case "false":
			return false
		}
		return nil
	}
	return string(s)
}

// valueKey tells typed values apart: 2 the integer and "2" the string are two.
func valueKey(v any) string { return fmt.Sprintf("%T %v", v, AttributeJSON(v)) }

func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(CleanText(x, 40))
	case AttributeText:
		return strconv.Quote(CleanText(string(x), 40))
	case float64, bool:
		return fmt.Sprint(x)
	}
	return "an object or list"
}

func attributeTypes(declared []Attribute, name string) string {
	var out []string
	for _, a := range declared {
		if a.Name != name {
			continue
		}
		s := a.Type
		if a.Type == AttrEnum {
			s += " of " + strings.Join(a.Values, ", ")
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, "; ")
}

func entityTypeNames(o Ontology) string {
	names := make([]string, len(o.EntityTypes))
	for i, t := range o.EntityTypes {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}
