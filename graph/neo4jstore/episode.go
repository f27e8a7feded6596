package neo4jstore

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/terms"
)

// episodeParams are the parameters of episode_create: the :Episodic properties
// (Graphiti's own, then memgate's) and, apart, the group_id, which the query sets
// last. Neo4j keeps a node's properties in a chain and puts the newest first, so the
// group_id every filtered read checks is found in the first record read; set in
// random map order it can sit anywhere in the chain, and the fulltext filter, which
// reads it for every hit, was measured 1.5x slower for it (BENCHMARKS.md).
func episodeParams(e *graph.Episode) map[string]any {
	org, holder, team := holders(e)
	return map[string]any{"props": episodeProps(e), "group_id": e.GroupID, "key": nullable(e.IdempotencyKey),
		"org": org, "holder": holder, "team": team, "authorized_at": optZeroTime(e.AuthorizedAt)}
}

// holders are what a write of e must hold (space_hold), in the organization of its
// space: the agent it is written for (whose space it is, or whose memory it is in a
// team's, a shared or the global space), and the team whose space it is; nil where
// there is none.
func holders(e *graph.Episode) (org string, agent, team any) {
	s, _ := graph.ParseGroupID(e.GroupID)
	if e.AgentID != "" {
		s.Agent = e.AgentID
	}
	return string(s.Org), nullable(s.Agent), nullable(s.Team)
}

func episodeProps(e *graph.Episode) map[string]any {
	p := map[string]any{
		"uuid": e.UUID, "name": e.Name, "source": e.Source,
		"source_description": e.SourceDescription, "content": e.Content, "entity_edges": []string{},
		"created_at": e.CreatedAt.UTC(), "valid_at": e.ValidAt.UTC(),
		"agent_id": e.AgentID, "status": e.Status, "attempts": int64(e.Attempts), "last_error": e.LastError,
		"requester_id": e.RequesterID, "host_key": e.HostKey, "tags": nonNil(e.Tags), "priority": e.Priority,
		"content_hash": e.ContentHash, "promoted_from": e.PromotedFrom, "promoted_by": e.PromotedBy,
		"promoted_from_group_id": e.PromotedFromGroup, "visibility_rule": e.VisibilityRule,
		"request_hash": e.RequestHash, "content_terms": searchTerms(e.Content), "version": int64(max(e.Version, 1)),
		"updated_by": e.UpdatedBy, "content_agent": e.ContentAgent,
	}
	if len(e.DerivedFrom) > 0 {
		p["derived_from"] = e.DerivedFrom
	}
	if e.IdempotencyKey != "" {
		p["idempotency_key"] = e.IdempotencyKey
	}
	if e.Metadata != nil {
		b, _ := json.Marshal(e.Metadata)
		p["metadata"] = string(b)
	}
	if e.Messages != nil {
		b, _ := json.Marshal(e.Messages)
		p["messages"] = string(b)
	}
	if e.ExpiresAt != nil {
		p["expires_at"] = e.ExpiresAt.UTC()
	}
	if e.Confidence != nil {
		p["confidence"] = *e.Confidence
	}
	if e.PromotedAt != nil {
		p["promoted_at"] = e.PromotedAt.UTC()
	}
	if e.UpdatedAt != nil {
		p["updated_at"] = e.UpdatedAt.UTC()
	}
	if e.Unextracted {
		p["extract"] = false
	}
	if e.ExtractionInstructions != "" {
		p["extraction_instructions"] = e.ExtractionInstructions
	}
	if e.TraceParent != "" {
		p["traceparent"] = e.TraceParent
	}
	if len(e.Embedding) > 0 {
		p["content_embedding"] = floats(e.Embedding)
	}
	return p
}

// optionalProps are the episode properties episodeProps leaves out when unset: an
// update sets them to null, which removes them.
var optionalProps = []string{"metadata", "messages", "expires_at", "confidence", "promoted_at", "updated_at", "extract", "traceparent"}

// updateProps are the properties of e an update writes: everything but its identity
// (uuid, created_at, idempotency key) and its space, which episode_update sets apart.
// requeue (a new content or space) ends any lease a worker holds on it, so that
// worker's result is refused; otherwise the lease is left alone.
func updateProps(e *graph.Episode, requeue bool) map[string]any {
	p := episodeProps(e)
	for _, k := range optionalProps {
		if _, ok := p[k]; !ok {
			p[k] = nil
		}
	}
	for _, k := range []string{"uuid", "created_at", "idempotency_key", "request_hash"} {
		delete(p, k)
	}
	if requeue {
		p["lease_owner"], p["lease_expires_at"], p["retry_at"] = nil, nil, nil
	}
	if _, embedded := p["content_embedding"]; !embedded && requeue {
		// The embedding of the content it had goes with it: extraction embeds the new,
		// or the update did (Episode.Embedding).
		p["content_embedding"] = nil
	}
	if requeue {
		p["turn_embedding"], p["turn_weight"] = nil, nil // extraction reads it after the turn before it again
	}
	return p
}

// versionProps are the properties of the :MemoryVersion node that keeps e as it was
// when replaced.
func versionProps(e *graph.Episode, replacedAt time.Time, replacedBy string) map[string]any {
	p := episodeProps(e)
	for _, k := range []string{"uuid", "idempotency_key", "request_hash", "content_terms", "entity_edges", "traceparent"} {
		delete(p, k)
	}
	p["episode_uuid"], p["group_id"] = e.UUID, e.GroupID
	p["replaced_at"], p["replaced_by"] = replacedAt.UTC(), replacedBy
	for k, v := range costProps(e.Cost) { // what the memory had cost when it was replaced
		if k != "attempt" {
			p["cost_"+k] = v
		}
	}
	return p
}

// costProps is a cost as the queries take it (the $cost of episode_release, a write's
// cost in graph_save; see _cost_add), and, prefixed with cost_, as an :Episodic or
// :MemoryVersion node holds it.
func costProps(c graph.Cost) map[string]any {
	return map[string]any{
		"attempt": c.Attempt, "chat_calls": c.ChatCalls, "prompt_tokens": c.PromptTokens, "completion_tokens": c.CompletionTokens,
		"embedding_calls": c.EmbeddingCalls, "embedding_inputs": c.EmbeddingInputs, "embedding_tokens": c.EmbeddingTokens,
		"seconds": c.Seconds, "estimated": c.Estimated,
	}
}

// costOf reads a cost from props, each key prefixed with prefix (cost_ on a node, none
// in episode_usage's row); a missing one is 0.
func costOf(props map[string]any, prefix string) graph.Cost {
	return graph.Cost{
		ChatCalls: num(props[prefix+"chat_calls"]), PromptTokens: num(props[prefix+"prompt_tokens"]),
		CompletionTokens: num(props[prefix+"completion_tokens"]), EmbeddingCalls: num(props[prefix+"embedding_calls"]),
		EmbeddingInputs: num(props[prefix+"embedding_inputs"]), EmbeddingTokens: num(props[prefix+"embedding_tokens"]),
		Seconds: floatOf(props[prefix+"seconds"]), Estimated: props[prefix+"estimated"] == true,
	}
}

// floatOf reads a number Neo4j returns as a float or, for a whole one (a sum of no
// rows), an integer.
func floatOf(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	return 0
}

// searchTerms is text's terms as the exact search plans match them (content_terms,
// fact_terms, name_terms; terms.Of): each once per occurrence with a space on both
// sides, so the queries count a term by the occurrences of ' term '.
func searchTerms(text string) string {
	return spaced(terms.Of(text))
}

// spaced joins words with a space on both sides of each.
func spaced(words []string) string {
	return " " + strings.Join(words, "  ") + " "
}

func episodeFromNode(n neo4j.Node) *graph.Episode {
	p := n.Props
	e := &graph.Episode{
		UUID: str(p["uuid"]), Name: str(p["name"]), GroupID: str(p["group_id"]), AgentID: str(p["agent_id"]),
		Source: str(p["source"]), SourceDescription: str(p["source_description"]), Content: str(p["content"]),
		CreatedAt: tm(p["created_at"]), ValidAt: tm(p["valid_at"]), Status: str(p["status"]),
		Attempts: int(num(p["attempts"])), LastError: str(p["last_error"]), RequesterID: str(p["requester_id"]),
		HostKey: str(p["host_key"]), Priority: str(p["priority"]), ContentHash: str(p["content_hash"]),
		PromotedFrom: str(p["promoted_from"]), PromotedFromGroup: str(p["promoted_from_group_id"]), PromotedBy: str(p["promoted_by"]),
		VisibilityRule: str(p["visibility_rule"]), ExtractionInstructions: str(p["extraction_instructions"]),
		IdempotencyKey: str(p["idempotency_key"]), RequestHash: str(p["request_hash"]),
		Version: max(int(num(p["version"])), 1), UpdatedBy: str(p["updated_by"]), DerivedFrom: strList(p["derived_from"]),
		ContentAgent: str(p["content_agent"]), Unextracted: p["extract"] == false, FactIDs: strList(p["entity_edges"]),
		Cost:        costOf(p, "cost_"),
		TraceParent: str(p["traceparent"]),
	}
	// An episode Graphiti wrote has no status (Graphiti extracts before it writes) and
	// no agent_id: it is done, and its agent is its space's.
	if e.Status == "" {
		e.Status = graph.StatusDone
	}
	if s, ok := graph.ParseGroupID(e.GroupID); ok && e.AgentID == "" {
		e.AgentID = s.Agent
	}
	if tags, ok := p["tags"].([]any); ok {
		for _, t := range tags {
			e.Tags = append(e.Tags, str(t))
		}
	}
	if s := str(p["metadata"]); s != "" {
		_ = json.Unmarshal([]byte(s), &e.Metadata)
	}
	if s := str(p["messages"]); s != "" {
		_ = json.Unmarshal([]byte(s), &e.Messages)
	}
	if t, ok := p["expires_at"].(time.Time); ok {
		e.ExpiresAt = &t
	}
	if t, ok := p["promoted_at"].(time.Time); ok {
		e.PromotedAt = &t
	}
	if c, ok := p["confidence"].(float64); ok {
		e.Confidence = &c
	}
	if t, ok := p["updated_at"].(time.Time); ok {
		e.UpdatedAt = &t
	}
	return e
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) int64 {
	n, _ := v.(int64)
	return n
}

func tm(v any) time.Time {
	t, _ := v.(time.Time)
	return t.UTC()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
