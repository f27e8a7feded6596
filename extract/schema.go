package extract

import (
	"encoding/json"
	"fmt"
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
		b, err = json.Marshal(sorted)
	}
	if err != nil {
		panic(fmt.Sprintf("the answer schema of %T: %v", *new(A), err))
	}
	return b
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
