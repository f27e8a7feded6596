package extract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// answerSchema is the JSON schema a chat call asks the model to follow, derived from
// the type A its answer is decoded into (jsonschema.For): A's fields by their json
// names, every one required, a field's jsonschema tag its description, no other
// properties. edit, when not nil, adds what a Go type cannot say (the configured
// entity types). Two rules differ from For's, as the schemas extraction's quality was
// measured with have them (testdata/schemas): a list is never null (a model with
// nothing to list gives []), and a type that may be null names null last. The JSON's
// keys are sorted, as json.Marshal writes a map: a server that constrains the output
// to the schema writes properties in the order given, and outside json_schema the
// schema's text is part of the prompt, so the order is part of what the model sees.
// A type For cannot describe is a programming error: it panics.
func answerSchema[A any](edit func(*jsonschema.Schema)) json.RawMessage {
	s, err := jsonschema.For[A](nil)
	if err != nil {
		panic(fmt.Sprintf("the answer schema of %T: %v", *new(A), err))
	}
	nullLast(s)
	if edit != nil {
		edit(s)
	}
	b, err := json.Marshal(s)
	var sorted any
	if err == nil {
		err = json.Unmarshal(b, &sorted)
	}
	if err == nil {
		b, err = marshalAttributesLast(sorted, false)
	}
	if err != nil {
		panic(fmt.Sprintf("the answer schema of %T: %v", *new(A), err))
	}
	return b
}

// marshalAttributesLast writes v as json.Marshal does, keys sorted, except that a
// property named "attributes" (a key of a "properties" object, when properties) comes
// after the others. A branch of a typed entity or
// fact then starts as the plain branch does ("name", "summary", "type"), and a server
// that constrains the output to the schema lets the model write the entity first and
// choose its type: sorted first, "attributes" made the model's opening "name" possible
// in the plain branch alone, so a small model typed every entity Other and gave no
// attributes (make eval's ontology table).
func marshalAttributesLast(v any, properties bool) ([]byte, error) {
	m, ok := v.(map[string]any)
	if !ok {
		if list, ok := v.([]any); ok {
			var b bytes.Buffer
			b.WriteByte('[')
			for i, e := range list {
				if i > 0 {
					b.WriteByte(',')
				}
				j, err := marshalAttributesLast(e, false)
				if err != nil {
					return nil, err
				}
				b.Write(j)
			}
			b.WriteByte(']')
			return b.Bytes(), nil
		}
		return json.Marshal(v)
	}
	keys := slices.Sorted(maps.Keys(m))
	if _, ok := m["attributes"]; ok && properties {
		keys = append(slices.DeleteFunc(keys, func(k string) bool { return k == "attributes" }), "attributes")
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(k)
		val, err := marshalAttributesLast(m[k], k == "properties" && !properties)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// nullLast takes null from the type of a list (For allows it: a Go slice may be nil)
// and moves it last in any other type that has it, through properties and items.
func nullLast(s *jsonschema.Schema) {
	if i := slices.Index(s.Types, "null"); i >= 0 {
		rest := slices.Delete(slices.Clone(s.Types), i, i+1)
		if slices.Equal(rest, []string{"array"}) {
			s.Type, s.Types = "array", nil
		} else {
			s.Types = append(rest, "null")
		}
	}
	for _, p := range s.Properties {
		nullLast(p)
	}
	if s.Items != nil {
		nullLast(s.Items)
	}
}

// given reports whether the JSON object content has key with a value other than
// null: a string an answer must give, told apart from an empty one.
func given(content, key string) bool {
	var m map[string]any
	return json.Unmarshal([]byte(content), &m) == nil && m[key] != nil
}
