package neo4jstore

import (
	"context"
	"slices"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

// removedMention is what an unlinked episode's mention of an entity recorded of it:
// recorded false for a mention saved before mentions recorded what their episode
// said (or for no mention, when the entity was reached through a fact).
type removedMention struct {
	recorded bool
	said     string
}

// unlinkedEntities reads episode_unlink's answer: the entities whose support it
// changed that remain, each with what the episode's mention of it recorded.
func unlinkedEntities(records []*neo4j.Record) map[string]removedMention {
	out := make(map[string]removedMention, len(records))
	for _, r := range records {
		var m removedMention
		for _, said := range anyList(r.Values[1]) {
			m.said, m.recorded = str(said), said != nil
		}
		out[str(r.Values[0])] = m
	}
	return out
}

// txResummarize makes the summaries of the entities of group whose support changed
// again, from what still supports them, by the rules the pipeline writes them with
// (graph.Description, graph.EntitySummary), with the exact search's name_terms; in the
// caller's transaction, so no reader sees the words of a memory that went.
func (db *DB) txResummarize(ctx context.Context, tx neo4j.ManagedTransaction, group string, changed map[string]removedMention) error {
	if len(changed) == 0 {
		return nil
	}
	ids := make([]string, 0, len(changed))
	for id := range changed {
		ids = append(ids, id)
	}
	records, err := db.txRun(ctx, tx, "entity_summary_sources", map[string]any{"uuids": ids, "group_id": group})
	if err != nil {
		return err
	}
	rows := make([]map[string]any, 0, len(records))
	for _, r := range records {
		id, name := str(r.Values[0]), str(r.Values[1])
		said := strList(r.Values[3])
		description := remainingDescription(str(r.Values[2]), said, int(num(r.Values[4])) > len(said), changed[id])
		var facts []*graph.Fact
		for _, v := range anyList(r.Values[5]) {
			p, _ := v.(map[string]any)
			assumed, _ := p["valid_at_assumed"].(bool)
			facts = append(facts, &graph.Fact{UUID: str(p["uuid"]), Fact: str(p["fact"]), SourceUUID: str(p["source"]),
				TargetUUID: str(p["target"]), ValidAt: timePtr(p["valid_at"]), StartAssumed: assumed, CreatedAt: tm(p["created_at"])})
		}
		summary := graph.EntitySummary(id, description, facts)
		// The attribute values only episodes still mentioning it state.
		n := &graph.EntityNode{AttributeHistory: graph.DecodeHistory(strList(r.Values[6]))}
		before := graph.CurrentAttributes(n.AttributeHistory)
		mentioned := strList(r.Values[7])
		n.Unstate(func(ep string) bool { return !slices.Contains(mentioned, ep) })
		var gone []string
		for attr := range before {
			if _, ok := n.Attributes[attr]; !ok {
				gone = append(gone, attr)
			}
		}
		rows = append(rows, map[string]any{"uuid": id, "summary": summary, "description": description,
			"name_terms": nameTerms(name, summary), "attributes": attributeProps(n.Attributes, gone),
			"attribute_history": optList(graph.EncodeHistory(n.AttributeHistory))})
	}
	_, err = db.txRun(ctx, tx, "entity_summary_set", map[string]any{"entities": rows, "group_id": group})
	return err
}

// remainingDescription is an entity's description once an episode's mention of it
// went: said are what the remaining mentions recorded, newest first. When every
// remaining mention recorded its words, it is made from them alone
// (graph.Description). When some did not (saved before mentions recorded them), their
// words are only in the stored description, so that is kept, less what the removed
// mention recorded (its text cut out), with the recorded words merged back in front
// in case the removed one had repeated them; a removed mention that recorded nothing
// leaves it as it was. Nothing is made up: the result holds only words of the stored
// description and of the remaining mentions.
func remainingDescription(stored string, said []string, unrecorded bool, removed removedMention) string {
	if !unrecorded {
		return graph.Description(said)
	}
	if removed.recorded && removed.said != "" {
		stored = graph.CleanText(strings.Replace(stored, removed.said, " ", 1), graph.MaxSummaryRunes/2)
	}
	for i := len(said) - 1; i >= 0; i-- {
		stored = graph.MergeDescription(said[i], stored)
	}
	return stored
}
