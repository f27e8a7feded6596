package graph

import (
	"bytes"
	"encoding/json"
)

// SourceDirect is the source_description of the memory that records a fact an agent
// stated directly (POST /v1/facts): a json memory whose content is the Extracted it
// states, which the pipeline reads as given instead of asking a model. The fact is
// then supported by that memory like any extracted fact, so provenance, deletion and
// erasure work as for any other.
const SourceDirect = "direct"

// DirectContent is the content of the memory that records x.
func DirectContent(x *Extracted) string {
	b, _ := json.Marshal(x) // strings, times and slices only: Marshal cannot fail
	return string(b)
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
