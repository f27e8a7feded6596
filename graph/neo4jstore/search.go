package neo4jstore

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/cypher"
	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/graph/terms"
)

// The plans of the search queries. Text search reads the visible items itself up to
// exactSearchMax of them, else asks the fulltext index for every visible item holding
// one of the query's words (see episode_search.cypher); both score by BM25 over the
// visible set alone. BenchmarkEpisodeSearch measures both plans, and 300 is about
// where they cost the same on its corpus. Vector search compares the visible items'
// vectors with the query's itself, whatever their number (fact_search_vector.cypher):
// a vector index's nearest neighbours are chosen among every space's items, so which
// visible ones it returns would depend on what the requester cannot read.
const exactSearchMax = 300

// searchParams are the parameters every search query takes: the visible set, the
// limit and the filters of _fact_filter and _entity_filter.
func searchParams(vis graph.Visible, f graph.SearchFilter, limit int, params map[string]any) map[string]any {
	at, asOf := time.Now().UTC(), f.AsOf != nil
	if asOf {
		at = f.AsOf.UTC()
	}
	params["limit"] = int64(limit)
	typeParams(f.TypeFilter, params)
	params["window"] = window(f)
	params["at"], params["as_of"], params["include_expired"] = at, asOf, f.IncludeExpired
	params["embeddings"] = f.WithEmbeddings
	return visParams(vis, params)
}

// window is the parameter of the relation and creation-time filters of _fact_filter,
// _entity_filter and _episode_filter, and of the last's bound on reference time (a
// memory said after as_of is not among what was known then), $window: one map, for
// the reason typeParams gives. As separate parameters, a search with a relation or a
// time bound and one without were two plans of each search query, each taking seconds
// of Neo4j's CPU to make.
func window(f graph.SearchFilter) map[string]any {
	return map[string]any{"relations": nonNil(f.Relations), "created_after": optTime(f.CreatedAfter),
		"created_before": optTime(f.CreatedBefore), "said_by": optTime(f.AsOf)}
}

// textParam is the parameter of _bm25, $words: the query's words in a map, so that a
// text without a word ("*") is not another plan of each search query (an empty list
// and a list of strings are two parameter types to Neo4j).
func textParam(terms []string) map[string]any {
	return map[string]any{"terms": nonNil(terms)}
}

// typeParams are the parameter of _entity_typed and _fact_typed, $typed: the types, and
// the attribute filters as [{name, values}] (a date a Neo4j date, as stored). One map
// whatever it holds: Neo4j plans a query again for each new combination of its
// parameters' types (an empty list, a list of strings, of maps), and planning the
// search queries takes seconds; a map's type is the same whatever its entries.
func typeParams(f graph.TypeFilter, params map[string]any) map[string]any {
	attrs := func(fs []graph.AttributeFilter) []any {
		out := make([]any, len(fs))
		for i, a := range fs {
			values := make([]any, len(a.Values))
			for j, v := range a.Values {
				if t, ok := v.(time.Time); ok {
					v = neo4j.DateOf(t)
				}
				values[j] = v
			}
			out[i] = map[string]any{"name": a.Name, "values": values}
		}
		return out
	}
	params["typed"] = map[string]any{"types": nonNil(f.EntityTypes), "edge_types": nonNil(f.EdgeTypes),
		"attributes": attrs(f.Attributes), "edge_attributes": attrs(f.EdgeAttributes)}
	return params
}

// textFields are the fulltext index fields each text query's words are looked for in:
// those its exact plan scores (content_terms, fact_terms, name_terms).
var textFields = map[string][]string{
	"episode_search":     {"content"},
	"fact_search_text":   {"name", "fact"},
	"entity_search_text": {"name", "summary"},
}

// textSearch runs a text query (episode_, fact_ or entity_search_text) with the query's
// terms (terms.Query) twice: as the fulltext query that finds the items holding a form
// of them, and as the terms BM25 counts over the visible set (_bm25), which scores at
// most exactMax visible items itself. No records when the text has no word.
func (db *DB) textSearch(ctx context.Context, name, text string, vis graph.Visible, f graph.SearchFilter, limit, exactMax int) ([]*neo4j.Record, error) {
	words := terms.Query(text)
	if err := enumerated(vis); err != nil || len(words) == 0 || len(vis.GroupIDs) == 0 {
		return nil, err
	}
	params := searchParams(vis, f, limit, map[string]any{"query": cypher.LuceneStems(textFields[name], words, vis.GroupIDs),
		"words": textParam(words), "exact_max": int64(exactMax)})
	return db.run(ctx, neo4j.AccessModeRead, name, params)
}

// distinct returns the first n different strings of s, in order.
func distinct(s []string, n int) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0:0]
	for _, w := range s {
		if !seen[w] && len(out) < n {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func (db *DB) FactsByText(ctx context.Context, text string, vis graph.Visible, f graph.SearchFilter, limit int) ([]graph.FactHit, error) {
	records, err := db.textSearch(ctx, "fact_search_text", text, vis, f, limit, exactSearchMax)
	return factHits(records), err
}

func (db *DB) EntitiesByText(ctx context.Context, text string, vis graph.Visible, f graph.SearchFilter, limit int) ([]graph.EntityHit, error) {
	records, err := db.textSearch(ctx, "entity_search_text", text, vis, f, limit, exactSearchMax)
	return entityHits(records), err
}

func (db *DB) FactsByVector(ctx context.Context, v []float32, vis graph.Visible, f graph.SearchFilter, limit int) ([]graph.FactHit, error) {
	records, err := db.vectorSearch(ctx, "fact_search_vector", v, vis, f, limit)
	return factHits(records), err
}

func (db *DB) EpisodesByVector(ctx context.Context, v []float32, vis graph.Visible, f graph.SearchFilter, limit int) ([]graph.ScoredEpisode, error) {
	records, err := db.vectorSearch(ctx, "episode_search_vector", v, vis, f, limit)
	return scoredEpisodes(records), err
}

func (db *DB) EntitiesByVector(ctx context.Context, v []float32, vis graph.Visible, f graph.SearchFilter, limit int) ([]graph.EntityHit, error) {
	records, err := db.vectorSearch(ctx, "entity_search_vector", v, vis, f, limit)
	return entityHits(records), err
}

// vectorSearch runs a vector query: exact cosine over the visible items.
func (db *DB) vectorSearch(ctx context.Context, name string, v []float32, vis graph.Visible, f graph.SearchFilter, limit int) ([]*neo4j.Record, error) {
	if err := enumerated(vis); err != nil || len(v) == 0 || len(vis.GroupIDs) == 0 {
		return nil, err
	}
	return db.run(ctx, neo4j.AccessModeRead, name, searchParams(vis, f, limit, map[string]any{"embedding": floats(v)}))
}

func (db *DB) SearchSmall(ctx context.Context, q graph.Retrieval, vis graph.Visible, f graph.SearchFilter, limit int) (*graph.Found, error) {
	if err := enumerated(vis); err != nil || len(vis.GroupIDs) == 0 {
		return &graph.Found{}, err
	}
	params := searchParams(vis, f, limit, map[string]any{"words": textParam(terms.Query(q.Text)),
		"embedding": floats(q.Vector), "exact_max": int64(exactSearchMax),
		"facts": q.Facts, "entities": q.Entities, "episodes": q.Episodes})
	records, err := db.run(ctx, neo4j.AccessModeRead, "search_small", params)
	if err != nil || len(records) == 0 {
		return nil, err
	}
	row, out := records[0].Values, &graph.Found{}
	for _, list := range row[:2] {
		var hits []graph.FactHit
		for _, x := range anyList(list) {
			v := anyList(x)
			hits = append(hits, factHit(v[:3], v[3].(float64)))
		}
		out.Facts = append(out.Facts, hits)
	}
	for _, list := range row[2:4] {
		var hits []graph.EntityHit
		for _, x := range anyList(list) {
			v := anyList(x)
			hits = append(hits, graph.EntityHit{Entity: entityFromRow(v[0]), Score: v[1].(float64)})
		}
		out.Entities = append(out.Entities, hits)
	}
	for _, list := range row[4:6] {
		var hits []graph.ScoredEpisode
		for _, x := range anyList(list) {
			v := anyList(x)
			hits = append(hits, graph.ScoredEpisode{Episode: episodeFromNode(v[0].(neo4j.Node)), Score: v[1].(float64)})
		}
		out.Episodes = append(out.Episodes, hits)
	}
	return out, nil
}

func (db *DB) Walk(ctx context.Context, center string, depth int, vis graph.Visible, f graph.SearchFilter, limit int) (*graph.Walk, error) {
	if err := enumerated(vis); err != nil {
		return nil, err
	}
	if _, err := db.Entity(ctx, center, vis); err != nil {
		return nil, err // the center must itself be visible
	}
	const maxReached = 1000 // a walk through a hub stops growing here
	w := &graph.Walk{Distance: map[string]int{}}
	frontier, seen := []string{center}, []string{center}
	for d := 1; d <= depth && len(frontier) > 0 && len(seen) < maxReached; d++ {
		records, err := db.run(ctx, neo4j.AccessModeRead, "graph_expand", visParams(vis, map[string]any{
			"frontier": frontier, "seen": seen, "max": int64(maxReached - len(seen))}))
		if err != nil {
			return nil, err
		}
		frontier = frontier[:0:0]
		for _, r := range records {
			id := r.Values[0].(string)
			w.Distance[id] = d
			frontier, seen = append(frontier, id), append(seen, id)
		}
	}
	reached := []map[string]any{{"uuid": center, "distance": int64(0)}}
	for id, d := range w.Distance {
		reached = append(reached, map[string]any{"uuid": id, "distance": int64(d)})
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, "graph_search", searchParams(vis, f, limit, map[string]any{
		"reached": reached, "depth": int64(depth)}))
	if err != nil {
		return nil, err
	}
	w.Distance[center] = 0
	for _, x := range anyList(records[0].Values[0]) {
		e := anyList(x)
		w.Entities = append(w.Entities, graph.EntityHit{Entity: entityFromRow(e[0]), Score: float64(num(e[1]))})
	}
	for _, x := range anyList(records[0].Values[1]) {
		w.Facts = append(w.Facts, factHit(anyList(x)[:3], float64(num(anyList(x)[3]))))
	}
	return w, nil
}

func (db *DB) Facts(ctx context.Context, vis graph.Visible, f graph.TypeFilter, page graph.PageRequest) (graph.FactPage, error) {
	if err := enumerated(vis); err != nil {
		return graph.FactPage{}, err
	}
	params := visParams(vis, typeParams(f, map[string]any{"limit": int64(page.Limit + 1), "embeddings": false}))
	if err := cursorParams(page.Cursor, params); err != nil {
		return graph.FactPage{}, err
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, "fact_list", params)
	if err != nil {
		return graph.FactPage{}, err
	}
	var out graph.FactPage
	for i, r := range records {
		if i == page.Limit {
			last := out.Facts[len(out.Facts)-1].Fact
			out.HasMore, out.NextCursor = true, encodeCursor(last.CreatedAt, last.UUID)
			break
		}
		out.Facts = append(out.Facts, factHit(r.Values[:3], 0))
	}
	return out, nil
}

func (db *DB) Conflicts(ctx context.Context, vis graph.Visible, page graph.PageRequest) (graph.ConflictPage, error) {
	if err := enumerated(vis); err != nil {
		return graph.ConflictPage{}, err
	}
	params := visParams(vis, map[string]any{"limit": int64(page.Limit + 1), "embeddings": false})
	if err := cursorParams(page.Cursor, params); err != nil {
		return graph.ConflictPage{}, err
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, "conflict_list", params)
	if err != nil {
		return graph.ConflictPage{}, err
	}
	var out graph.ConflictPage
	for i, r := range records {
		if i == page.Limit {
			last := out.Conflicts[len(out.Conflicts)-1].Conflict
			out.HasMore, out.NextCursor = true, encodeCursor(last.CreatedAt, last.UUID)
			break
		}
		out.Conflicts = append(out.Conflicts, graph.ConflictHit{Conflict: conflictFromProps(r.Values[0].(map[string]any)),
			Old: factHit(r.Values[1:4], 0), New: factHit(r.Values[4:7], 0)})
	}
	return out, nil
}

func (db *DB) Fact(ctx context.Context, id string, vis graph.Visible) (*graph.FactHit, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "fact_get", visParams(vis, map[string]any{"uuid": id, "embeddings": false}))
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, graph.Errorf(graph.ENOTFOUND, "fact not found")
	}
	hit := factHit(records[0].Values[:3], 0)
	return &hit, nil
}

func (db *DB) Entity(ctx context.Context, id string, vis graph.Visible) (*graph.EntityNode, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "entity_get", visParams(vis, map[string]any{"uuid": id, "embeddings": false}))
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, graph.Errorf(graph.ENOTFOUND, "entity not found")
	}
	return entityFromRow(records[0].Values[0]), nil
}

func factHits(records []*neo4j.Record) []graph.FactHit {
	var out []graph.FactHit
	for _, r := range records {
		if r.Values[0] == nil {
			continue // OPTIONAL CALL's row when nothing was found
		}
		score, _ := r.Values[3].(float64)
		out = append(out, factHit(r.Values[:3], score))
	}
	return out
}

// factHit reads the three maps of a _fact_row: fact, source, target.
func factHit(v []any, score float64) graph.FactHit {
	return graph.FactHit{Fact: factFromProps(v[0].(map[string]any)), Source: entityFromRow(v[1]),
		Target: entityFromRow(v[2]), Score: score}
}

// entityFromRow reads the map of an _entity_row.
func entityFromRow(v any) *graph.EntityNode {
	return entityFromProps(v.(map[string]any), nil)
}

func entityHits(records []*neo4j.Record) []graph.EntityHit {
	var out []graph.EntityHit
	for _, r := range records {
		if r.Values[0] == nil {
			continue
		}
		score, _ := r.Values[1].(float64)
		out = append(out, graph.EntityHit{Entity: entityFromRow(r.Values[0]), Score: score})
	}
	return out
}
