package neo4jstore

import (
	"slices"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

func entityRows(es []*graph.EntityNode) []map[string]any {
	rows := make([]map[string]any, len(es))
	for i, e := range es {
		labels := []string{}
		if e.Type != "" {
			labels = append(labels, e.Type)
		}
		rows[i] = map[string]any{
			"uuid": e.UUID, "name": e.Name, "group_id": e.GroupID, "summary": e.Summary, "description": e.Description,
			"name_embedding": floats(e.NameEmbedding), "created_at": e.CreatedAt.UTC(), "labels": labels,
			"name_terms": nameTerms(e.Name, e.Summary), "name_words": spaced(graph.Words(strings.Join(append([]string{e.Name}, e.Aliases...), " "))),
			"aliases": nonNil(e.Aliases), "attributes": attributeProps(e.Attributes, nil),
			"attribute_history": optList(graph.EncodeHistory(e.AttributeHistory)),
		}
	}
	return rows
}

// attributeProps are an entity's or fact's attributes as node or edge properties of
// the same names: a date as a Neo4j date, the rest as they are; each name of gone
// that is not among them as null, which SET += removes.
func attributeProps(attrs map[string]any, gone []string) map[string]any {
	out := make(map[string]any, len(attrs)+len(gone))
	for _, name := range gone {
		out[name] = nil
	}
	for name, v := range attrs {
		if slices.Contains(graph.ReservedAttributes, name) {
			continue // config.Load refuses such names: never overwrite a property of memgate's or Graphiti's
		}
		if t, ok := v.(time.Time); ok {
			v = neo4j.DateOf(t)
		}
		out[name] = v
	}
	return out
}

// attributesOf are the properties of an entity node or RELATES_TO edge that are not
// memgate's or Graphiti's own: its type's attributes, typed as graph.Attribute.Value
// gives them (a Neo4j date a time.Time at midnight UTC).
func attributesOf(p map[string]any) map[string]any {
	var out map[string]any
	for name, v := range p {
		if slices.Contains(graph.ReservedAttributes, name) || v == nil {
			continue
		}
		switch x := v.(type) {
		case neo4j.Date:
			t := x.Time()
			v = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		case string, bool, int64, float64:
		default:
			continue // not a value an attribute has
		}
		if out == nil {
			out = map[string]any{}
		}
		out[name] = v
	}
	return out
}

// nameTerms are an entity's words the exact search plan scores (name_terms): its name
// and summary's.
func nameTerms(name, summary string) string {
	return searchTerms(name + " " + summary)
}

func factRows(fs []*graph.Fact) []map[string]any {
	rows := make([]map[string]any, len(fs))
	for i, f := range fs {
		rows[i] = map[string]any{
			"uuid": f.UUID, "name": f.Name, "fact": f.Fact, "source": f.SourceUUID, "target": f.TargetUUID,
			"group_id": f.GroupID, "episodes": nonNil(f.Episodes), "fact_embedding": floats(f.FactEmbedding),
			"created_at": f.CreatedAt.UTC(), "expired_at": optTime(f.ExpiredAt), "valid_at": optTime(f.ValidAt),
			"invalid_at": optTime(f.InvalidAt), "fact_terms": searchTerms(f.Name + " " + f.Fact),
			"reference_time":   optTime(nonZero(f.ReferenceTime)),
			"valid_at_assumed": f.StartAssumed, "overruled_valid_at": optTime(f.OverruledStart),
			"conflicts": optList(f.Conflicts), "attributes": attributeProps(f.Attributes, nil), "note": nullable(f.Note),
		}
	}
	return rows
}

// optList is a list for the driver, or null for none (no empty property).
func optList(l []string) any {
	if len(l) == 0 {
		return nil
	}
	return l
}

func conflictRows(cs []*graph.Conflict) []map[string]any {
	rows := make([]map[string]any, len(cs))
	for i, c := range cs {
		rows[i] = map[string]any{"uuid": c.UUID, "group_id": c.GroupID, "old": c.Old, "new": c.New,
			"episode": c.Episode, "created_at": c.CreatedAt.UTC()}
	}
	return rows
}

func conflictFromProps(p map[string]any) *graph.Conflict {
	return &graph.Conflict{UUID: str(p["uuid"]), GroupID: str(p["group_id"]), Old: str(p["old_fact"]),
		New: str(p["new_fact"]), Episode: str(p["episode"]), CreatedAt: tm(p["created_at"]), Keep: str(p["keep"]),
		ResolvedBy: str(p["resolved_by"]), ResolvedAt: timePtr(p["resolved_at"])}
}

func entityFromNode(n neo4j.Node) *graph.EntityNode {
	return entityFromProps(n.Props, n.Labels)
}

// entityFromProps reads an entity from its properties, as a node or as the map rows of
// _entity_row carry (labels among them).
func entityFromProps(p map[string]any, labels []string) *graph.EntityNode {
	e := &graph.EntityNode{UUID: str(p["uuid"]), Name: str(p["name"]), GroupID: str(p["group_id"]),
		Summary: str(p["summary"]), Description: str(p["description"]), NameEmbedding: vector(p["name_embedding"]),
		CreatedAt: tm(p["created_at"]), Aliases: strList(p["aliases"]),
		Attributes: attributesOf(p), AttributeHistory: graph.DecodeHistory(strList(p["attribute_history"]))}
	if labels == nil {
		labels = strList(p["labels"])
	}
	for _, l := range labels {
		if l != "Entity" {
			e.Type = l
		}
	}
	return e
}

func factFromRel(r neo4j.Relationship) *graph.Fact {
	return factFromProps(r.Props)
}

func factFromProps(p map[string]any) *graph.Fact {
	f := &graph.Fact{UUID: str(p["uuid"]), Name: str(p["name"]), Fact: str(p["fact"]), GroupID: str(p["group_id"]),
		Episodes: strList(p["episodes"]), FactEmbedding: vector(p["fact_embedding"]), CreatedAt: tm(p["created_at"]),
		ExpiredAt: timePtr(p["expired_at"]), ValidAt: timePtr(p["valid_at"]), InvalidAt: timePtr(p["invalid_at"]),
		ReferenceTime: tm(p["reference_time"]), Conflicts: strList(p["conflicts"]),
		OverruledStart: timePtr(p["overruled_valid_at"]), Attributes: attributesOf(p), Note: str(p["note"])}
	f.StartAssumed, _ = p["valid_at_assumed"].(bool)
	return f
}

// nonZero is t, or nil for the zero time.
func nonZero(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// floats converts an embedding for the driver. A zero vector (what a text without
// words embeds to) and no vector are null: cosine similarity is undefined for them, and
// Neo4j's vector functions refuse them. Untyped, because a typed nil slice reaches Neo4j
// as an empty list, which every vector function then meets and fails on.
func floats(v []float32) any {
	out := make([]float64, len(v))
	zero := true
	for i, x := range v {
		out[i] = float64(x)
		zero = zero && x == 0
	}
	if zero {
		return nil
	}
	return out
}

func vector(v any) []float32 {
	l := anyList(v)
	out := make([]float32, 0, len(l))
	for _, x := range l {
		if f, ok := x.(float64); ok {
			out = append(out, float32(f))
		}
	}
	return out
}

func optTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}

// optZeroTime is optTime for a time whose zero value means none.
func optZeroTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func timePtr(v any) *time.Time {
	t, ok := v.(time.Time)
	if !ok {
		return nil
	}
	t = t.UTC()
	return &t
}
