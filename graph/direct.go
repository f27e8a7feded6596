package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// SourceDirect is the source_description of the memory that records a fact an agent
// stated directly (POST /v1/facts): a json memory whose content is the Extracted it
// states, which the pipeline reads as given instead of asking a model. The fact is
// then supported by that memory like any extracted fact, so provenance, deletion and
// erasure work as for any other.
const SourceDirect = "direct"

// DirectContent is the content of the memory that records x, its text as written
// (no HTML escapes, so a rule or a reader sees "AT&T", not "AT\u0026T").
func DirectContent(x *Extracted) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(x) // strings, times and slices only: Encode cannot fail
	return strings.TrimSuffix(b.String(), "\n")
}

// Texts are the texts a memory holds as its readers and the pipeline read them: its
// content and, for one the pipeline reads as a direct fact (Direct), each string its
// content decodes to. A check of the JSON text alone would miss what escapes (\u0040)
// hide and what an anchored pattern finds at the start of a name or a sentence.
func Texts(source, description, content string) []string {
	out := []string{content}
	x, ok := Direct(&Episode{Source: source, SourceDescription: description, Content: content})
	if !ok {
		return out
	}
	for _, e := range x.Entities {
		out = append(out, e.Name, e.Type, e.Summary)
		out = append(out, attributeTexts(e.Attributes)...)
	}
	for _, f := range x.Facts {
		out = append(out, f.Source, f.Target, f.Relation, f.Fact)
		out = append(out, attributeTexts(f.Attributes)...)
	}
	return out
}

// Direct is what the memory e states directly, when it records a direct fact: a json
// memory with source_description direct whose content is an Extracted and nothing
// else (unknown fields refused). Any other memory is read by the extractor.
func Direct(e *Episode) (*Extracted, bool) {
	if e.Source != SourceJSON || e.SourceDescription != SourceDirect {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(e.Content)))
	dec.DisallowUnknownFields()
	var x Extracted
	if err := dec.Decode(&x); err != nil || dec.More() || len(x.Facts) == 0 {
		return nil, false
	}
	return &x, true
}

// attributeTexts are the names of attributes and the text of their values.
func attributeTexts(attrs map[string]any) []string {
	var out []string
	for name, v := range attrs {
		out = append(out, name, fmt.Sprint(v))
	}
	return out
}
