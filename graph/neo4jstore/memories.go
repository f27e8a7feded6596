package neo4jstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

var _ graph.Memories = (*DB)(nil)

func visParams(vis graph.Visible, params map[string]any) map[string]any {
	ids := vis.GroupIDs
	if ids == nil {
		ids = []string{}
	}
	params["group_ids"] = ids
	params["any_agent_public"] = vis.AnyAgentPublic
	params["public_prefix"] = vis.PublicPrefix()
	return params
}

// enumerated refuses a visible set that is not a plain list of spaces: lists and
// searches run `group_id IN $group_ids`, which the planner serves from the index.
func enumerated(vis graph.Visible) error {
	if vis.AnyAgentPublic {
		return graph.Errorf(graph.EINTERNAL, "lists and searches take an enumerated visible set")
	}
	return nil
}

func (db *DB) CreateEpisodes(ctx context.Context, eps []*graph.Episode) []graph.CreateResult {
	out := make([]graph.CreateResult, len(eps))
	// In order: each one counted against a quota alone, the others into the group
	// commit together, so an episode commits no later than the next one of the call.
	// Each write's idempotency key is looked up in its own transaction (episode_create).
	var grouped []*graph.Episode
	var at []int
	for i, e := range eps {
		if e.PublicQuota > 0 {
			res, err := db.createAlone(ctx, e)
			out[i] = created(e, res, err)
			continue
		}
		grouped, at = append(grouped, e), append(at, i)
	}
	for k, res := range db.commitEpisodes(ctx, grouped) {
		out[at[k]] = res
	}
	return out
}

// created is the result of writing e: err is the write's, and res what it found, when
// it succeeded: e stored, or the episode an earlier request with e's key stored.
func created(e *graph.Episode, res graph.CreateResult, err error) graph.CreateResult {
	if isConstraintViolation(err) && e.IdempotencyKey != "" {
		// Another request with this key committed between our look-up and our write,
		// or is committing now: one winner, and this one is told to retry.
		return graph.CreateResult{Err: graph.Errorf(graph.ECONFLICT,
			"a request with this Idempotency-Key is in flight; retry to get its result")}
	}
	if err != nil {
		return graph.CreateResult{Err: err}
	}
	return res
}

// gone answers a write to the space of an agent that was erased, or of a team that
// was dissolved, after the request was authorized.
func gone(e *graph.Episode) error {
	if e.Space().Kind == graph.SpaceTeam {
		return graph.Errorf(graph.ENOTFOUND, "team not found")
	}
	return graph.Errorf(graph.ENOTFOUND, "agent not found")
}

// txPublicWrite counts e, written at, against its agent's public-write quota for the
// UTC day, or fails with EQUOTA and when to retry (the next UTC day).
func (db *DB) txPublicWrite(ctx context.Context, tx neo4j.ManagedTransaction, e *graph.Episode, at time.Time) error {
	day := at.UTC().Truncate(24 * time.Hour)
	records, err := db.txRun(ctx, tx, "agent_public_write",
		map[string]any{"org": string(e.Space().Org), "agent": e.AgentID, "day": day.Format(time.DateOnly), "limit": int64(e.PublicQuota)})
	switch {
	case err != nil:
		return err
	case len(records) == 0:
		return gone(e)
	case num(records[0].Values[0]) >= int64(e.PublicQuota):
		return &graph.Error{Code: graph.EQUOTA, RetryAfter: day.Add(24 * time.Hour).Sub(at),
			Message: fmt.Sprintf("agent %s has made its %d public writes of the day (UTC); retry after midnight UTC", e.AgentID, e.PublicQuota)}
	}
	return nil
}

// replay is the answer to e, whose key an earlier request used: the episode it
// stored in e's space (prior), when it was the same request; or, for another request
// (another body, or another space: used without a prior here), errKeyReused.
func replay(prior, e *graph.Episode) graph.CreateResult {
	if prior == nil || prior.RequestHash != e.RequestHash {
		return graph.CreateResult{Err: errKeyReused}
	}
	return graph.CreateResult{Episode: prior, Replayed: true}
}

var errKeyReused = graph.Errorf(graph.EUNPROCESSABLE, "this Idempotency-Key was used for a different request")

// txByIdempotencyKey finds the episode stored under e's key in the space e is written
// to, and whether the key is used at all, in that space or another (the same look-up
// episode_create makes for each episode: idempotency_prior).
func (db *DB) txByIdempotencyKey(ctx context.Context, tx neo4j.ManagedTransaction, e *graph.Episode) (*graph.Episode, bool, error) {
	records, err := db.txRun(ctx, tx, "episode_by_idempotency_key", map[string]any{"key": e.IdempotencyKey, "group_id": e.GroupID})
	if err != nil || len(records) == 0 {
		return nil, false, err
	}
	used, _ := records[0].Values[1].(bool)
	if n, ok := records[0].Values[0].(neo4j.Node); ok {
		return episodeFromNode(n), used, nil
	}
	return nil, used, nil
}

func (db *DB) GetEpisode(ctx context.Context, id string, vis graph.Visible) (*graph.Episode, error) {
	eps, err := db.GetEpisodes(ctx, []string{id}, vis)
	if err != nil {
		return nil, err
	}
	if len(eps) == 0 {
		return nil, errNotFound
	}
	return eps[0], nil
}

func (db *DB) GetEpisodes(ctx context.Context, ids []string, vis graph.Visible) ([]*graph.Episode, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "episode_get", visParams(vis, map[string]any{"uuids": nonNil(ids)}))
	if err != nil {
		return nil, err
	}
	out := make([]*graph.Episode, len(records))
	for i, r := range records {
		out[i] = episodeFromNode(r.Values[0].(neo4j.Node))
	}
	return out, nil
}

var errNotFound = graph.Errorf(graph.ENOTFOUND, "memory not found")

func (db *DB) ListEpisodes(ctx context.Context, vis graph.Visible, agent string, page graph.PageRequest) (graph.EpisodePage, error) {
	if err := enumerated(vis); err != nil {
		return graph.EpisodePage{}, err
	}
	params := visParams(vis, map[string]any{"agent_id": nullable(agent), "limit": int64(page.Limit + 1)})
	if err := cursorParams(page.Cursor, params); err != nil {
		return graph.EpisodePage{}, err
	}
	records, err := db.run(ctx, neo4j.AccessModeRead, "episode_list", params)
	if err != nil {
		return graph.EpisodePage{}, err
	}
	var out graph.EpisodePage
	for i, r := range records {
		if i == page.Limit {
			out.HasMore = true
			last := out.Episodes[len(out.Episodes)-1]
			out.NextCursor = encodeCursor(last.CreatedAt, last.UUID)
			break
		}
		out.Episodes = append(out.Episodes, episodeFromNode(r.Values[0].(neo4j.Node)))
	}
	return out, nil
}

func (db *DB) SearchEpisodes(ctx context.Context, query string, vis graph.Visible, f graph.SearchFilter, limit int) ([]graph.ScoredEpisode, error) {
	return db.searchEpisodes(ctx, query, vis, f, limit, exactSearchMax)
}

func (db *DB) searchEpisodes(ctx context.Context, query string, vis graph.Visible, f graph.SearchFilter, limit, exactMax int) ([]graph.ScoredEpisode, error) {
	records, err := db.textSearch(ctx, "episode_search", query, vis, f, limit, exactMax)
	if noEpisodeIndex(err) {
		// A start rebuilding episode_content (Migrate) dropped it a moment ago, and
		// creates it again: the visible episodes are scored without it meanwhile.
		db.log.WarnContext(ctx, "episode search runs without its fulltext index while it is rebuilt", "err", err)
		records, err = db.textSearch(ctx, "episode_search", query, vis, f, limit, math.MaxInt32)
	}
	if err != nil {
		return nil, err
	}
	return scoredEpisodes(records), nil
}

func (db *DB) ExpireDerived(ctx context.Context, agent string, ids []string, at time.Time) ([]string, error) {
	records, err := db.run(ctx, neo4j.AccessModeWrite, "episode_expire_derived", map[string]any{"agent": agent, "ids": nonNil(ids), "at": at.UTC()})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(records))
	for i, r := range records {
		out[i] = str(r.Values[0])
	}
	return out, nil
}

func (db *DB) EpisodeNeighbours(ctx context.Context, ids []string, vis graph.Visible, f graph.SearchFilter, within time.Duration) (map[string][2]*graph.Episode, error) {
	if err := enumerated(vis); err != nil {
		return nil, err
	}
	params := visParams(vis, map[string]any{"uuids": nonNil(ids), "window": window(graph.SearchFilter{CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore, AsOf: f.AsOf}),
		"within": int64(within / time.Second)})
	records, err := db.run(ctx, neo4j.AccessModeRead, "episode_neighbours", params)
	if err != nil {
		return nil, err
	}
	out := map[string][2]*graph.Episode{}
	for _, r := range records {
		var pair [2]*graph.Episode
		for i, v := range r.Values[1:3] {
			if n, ok := v.(neo4j.Node); ok {
				pair[i] = episodeFromNode(n)
			}
		}
		out[str(r.Values[0])] = pair
	}
	return out, nil
}

// scoredEpisodes reads the rows (episode, score) of an episode search, best first.
func scoredEpisodes(records []*neo4j.Record) []graph.ScoredEpisode {
	out := make([]graph.ScoredEpisode, 0, len(records))
	for _, r := range records {
		if r.Values[0] == nil {
			continue // OPTIONAL CALL's row when nothing was found
		}
		score, _ := r.Values[1].(float64)
		out = append(out, graph.ScoredEpisode{Episode: episodeFromNode(r.Values[0].(neo4j.Node)), Score: score})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

func (db *DB) DeleteEpisode(ctx context.Context, id string, vis graph.Visible, authorize func(*graph.Episode) (*graph.AuditEvent, error)) error {
	_, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		e, err := db.txGetEpisode(ctx, tx, id, vis)
		if err != nil {
			return nil, err
		}
		ev, err := authorize(e)
		if err != nil {
			return nil, err
		}
		if err := db.txErase(ctx, tx, e); err != nil {
			return nil, err
		}
		return nil, db.txAudit(ctx, tx, ev)
	})
	return err
}

func (db *DB) EraseExpired(ctx context.Context, limit int, audit func(*graph.Episode) *graph.AuditEvent) (int, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "episode_expired", map[string]any{"limit": int64(limit)})
	if err != nil {
		return 0, err
	}
	erased := 0
	for _, r := range records {
		done, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
			locked, err := db.txRun(ctx, tx, "episode_expire_lock", map[string]any{"uuid": r.Values[0]})
			if err != nil || len(locked) == 0 {
				return false, err
			}
			e := episodeFromNode(locked[0].Values[0].(neo4j.Node))
			if e.UUID == "" || e.ExpiresAt == nil {
				return false, nil // erased by another sweeper while this one waited
			}
			if err := db.txErase(ctx, tx, e); err != nil {
				return false, err
			}
			return true, db.txAudit(ctx, tx, audit(e))
		})
		if err != nil {
			return erased, err
		}
		if done.(bool) {
			erased++
		}
	}
	return erased, nil
}

// txErase is the delete cascade: e, its versions, and what only it supported.
func (db *DB) txErase(ctx context.Context, tx neo4j.ManagedTransaction, e *graph.Episode) error {
	if err := db.txUnlink(ctx, tx, e, false); err != nil {
		return err
	}
	_, err := db.txRun(ctx, tx, "episode_delete", map[string]any{"uuid": e.UUID, "group_id": e.GroupID})
	return err
}

// txUnlink detaches e from what was derived from it in its space (txDetach), and so
// the episodes extracted with e in their context (episode_context_users): each is
// detached from what it derived and queued to be extracted again without e. Their own
// context users are left alone: their content has not changed.
func (db *DB) txUnlink(ctx context.Context, tx neo4j.ManagedTransaction, e *graph.Episode, retire bool) error {
	if err := db.txDetach(ctx, tx, e, retire); err != nil {
		return err
	}
	records, err := db.txRun(ctx, tx, "episode_context_users", map[string]any{"uuid": e.UUID, "group_id": e.GroupID})
	if err != nil || len(records) == 0 {
		return err
	}
	users := make([]string, len(records))
	for i, r := range records {
		users[i] = str(r.Values[0])
		if err := db.txDetach(ctx, tx, &graph.Episode{UUID: users[i], GroupID: e.GroupID}, false); err != nil {
			return err
		}
	}
	_, err = db.txRun(ctx, tx, "episode_requeue_context_users", map[string]any{"uuids": users, "group_id": e.GroupID})
	return err
}

// txDetach detaches e from what was derived from it in its space (episode_unlink), and
// makes the summaries of the entities that remain again without it (txResummarize).
func (db *DB) txDetach(ctx context.Context, tx neo4j.ManagedTransaction, e *graph.Episode, retire bool) error {
	records, err := db.txRun(ctx, tx, "episode_unlink", map[string]any{"uuid": e.UUID, "group_id": e.GroupID,
		"retire": retire, "now": time.Now().UTC()})
	if err == nil {
		err = db.txResummarize(ctx, tx, e.GroupID, unlinkedEntities(records))
	}
	if err == nil {
		_, err = db.txRun(ctx, tx, "conflict_prune", map[string]any{"group_id": e.GroupID})
	}
	return err
}

func (db *DB) UpdateEpisode(ctx context.Context, id string, vis graph.Visible, keep int,
	change func(*graph.Episode, []graph.Version) (*graph.Episode, *graph.AuditEvent, error)) (*graph.Episode, error) {
	out, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		if _, err := db.txRun(ctx, tx, "episode_lock", map[string]any{"uuid": id}); err != nil {
			return nil, err
		}
		e, versions, err := versionPage(db.txRun(ctx, tx, "episode_versions", versionParams(id, vis, nil, keep)))
		if err != nil {
			return nil, err
		}
		next, ev, err := change(e, versions)
		if err != nil {
			return nil, err
		}
		moved := next.GroupID != e.GroupID
		requeue := moved || next.Content != e.Content
		if moved {
			org, holder, team := holders(next)
			held, err := db.txRun(ctx, tx, "episode_move_hold", map[string]any{"org": org, "holder": holder, "team": team,
				"authorized_at": optZeroTime(next.AuthorizedAt)})
			if err != nil {
				return nil, err
			}
			if len(held) == 0 {
				return nil, gone(next)
			}
		}
		if requeue {
			if err := db.txUnlink(ctx, tx, e, !moved); err != nil {
				return nil, err
			}
		}
		if next.PublicQuota > 0 {
			if err := db.txPublicWrite(ctx, tx, next, *next.UpdatedAt); err != nil {
				return nil, err
			}
		}
		drop := make([]int64, len(next.DropVersions))
		for i, v := range next.DropVersions {
			drop[i] = int64(v)
		}
		records, err := db.txRun(ctx, tx, "episode_update", map[string]any{"uuid": e.UUID, "group_id": next.GroupID,
			"props": updateProps(next, requeue), "previous": versionProps(e, *next.UpdatedAt, next.UpdatedBy),
			"keep": int64(keep), "drop": drop})
		if err != nil {
			return nil, err
		}
		if len(records) == 0 {
			return nil, errNotFound
		}
		if !requeue && !sameTime(next.ExpiresAt, e.ExpiresAt) {
			if _, err := db.txRun(ctx, tx, "episode_support", map[string]any{"uuid": e.UUID}); err != nil {
				return nil, err
			}
		}
		return episodeFromNode(records[0].Values[0].(neo4j.Node)), db.txAudit(ctx, tx, ev)
	})
	if err != nil {
		return nil, err
	}
	return out.(*graph.Episode), nil
}

func sameTime(a, b *time.Time) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && a.Equal(*b))
}

func (db *DB) Versions(ctx context.Context, id string, vis graph.Visible, page graph.PageRequest) (*graph.Episode, graph.VersionPage, error) {
	var before any
	if page.Cursor != "" {
		n, err := strconv.Atoi(page.Cursor)
		if err != nil || n < 1 {
			return nil, graph.VersionPage{}, graph.Errorf(graph.EINVALID, "cursor is not one this API issued")
		}
		before = int64(n)
	}
	e, versions, err := versionPage(db.run(ctx, neo4j.AccessModeRead, "episode_versions", versionParams(id, vis, before, page.Limit+1)))
	if err != nil {
		return nil, graph.VersionPage{}, err
	}
	out := graph.VersionPage{Versions: versions}
	if len(versions) > page.Limit {
		out.Versions, out.HasMore = versions[:page.Limit], true
		out.NextCursor = strconv.Itoa(out.Versions[page.Limit-1].Memory.Version)
	}
	return e, out, nil
}

func versionParams(id string, vis graph.Visible, before any, limit int) map[string]any {
	return visParams(vis, map[string]any{"uuid": id, "before": before, "limit": int64(limit)})
}

// versionPage reads episode_versions' answer: the episode and its versions.
func versionPage(records []*neo4j.Record, err error) (*graph.Episode, []graph.Version, error) {
	if err != nil {
		return nil, nil, err
	}
	if len(records) == 0 {
		return nil, nil, errNotFound
	}
	e := episodeFromNode(records[0].Values[0].(neo4j.Node))
	var versions []graph.Version
	for _, v := range anyList(records[0].Values[1]) {
		n := v.(neo4j.Node)
		old := episodeFromNode(n)
		old.UUID = e.UUID
		versions = append(versions, graph.Version{Memory: old, ReplacedAt: tm(n.Props["replaced_at"]), ReplacedBy: str(n.Props["replaced_by"])})
	}
	return e, versions, nil
}

func (db *DB) PromoteEpisode(ctx context.Context, id string, vis graph.Visible, authorize func(*graph.Episode) (*graph.Episode, *graph.AuditEvent, error)) (*graph.Episode, error) {
	out, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		e, err := db.txGetEpisode(ctx, tx, id, vis)
		if err != nil {
			return nil, err
		}
		copied, ev, err := authorize(e)
		if err != nil {
			return nil, err
		}
		records, err := db.txRun(ctx, tx, "episode_create", map[string]any{"episodes": []any{episodeParams(copied)}})
		if err != nil {
			return nil, err
		}
		if len(records) == 0 || records[0].Values[1] == nil {
			return nil, gone(copied)
		}
		return copied, db.txAudit(ctx, tx, ev)
	})
	if err != nil {
		return nil, err
	}
	return out.(*graph.Episode), nil
}

func (db *DB) txGetEpisode(ctx context.Context, tx neo4j.ManagedTransaction, id string, vis graph.Visible) (*graph.Episode, error) {
	records, err := db.txRun(ctx, tx, "episode_get", visParams(vis, map[string]any{"uuids": []string{id}}))
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, errNotFound
	}
	return episodeFromNode(records[0].Values[0].(neo4j.Node)), nil
}

// isConstraintViolation reports a uniqueness constraint refusing a write.
func isConstraintViolation(err error) bool {
	var ne *neo4j.Neo4jError
	return errors.As(err, &ne) && ne.Code == "Neo.ClientError.Schema.ConstraintValidationFailed"
}

func (db *DB) ResolveConflict(ctx context.Context, id string, vis graph.Visible, keep, by string,
	authorize func(*graph.Conflict) (*graph.AuditEvent, error)) (*graph.ConflictHit, error) {
	out, err := db.inWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		locked, err := db.txRun(ctx, tx, "conflict_lock", visParams(vis, map[string]any{"uuid": id}))
		if err != nil {
			return nil, err
		}
		if len(locked) == 0 {
			return nil, graph.Errorf(graph.ENOTFOUND, "conflict not found")
		}
		c := conflictFromProps(locked[0].Values[0].(map[string]any))
		ev, err := authorize(c)
		if err != nil {
			return nil, err
		}
		if c.Keep != "" {
			return nil, graph.Errorf(graph.ECONFLICT, "the conflict was resolved already (keep %s)", c.Keep)
		}
		// Both facts must still be readable: one whose memories expired or went is
		// gone for every reader, and resolving would change what no one can see.
		var facts [2]*graph.Fact
		for i, f := range []string{c.Old, c.New} {
			readable, err := db.txRun(ctx, tx, "fact_get", visParams(graph.Visible{GroupIDs: []string{c.GroupID}},
				map[string]any{"uuid": f, "embeddings": false}))
			if err != nil {
				return nil, err
			}
			if len(readable) == 0 {
				return nil, graph.Errorf(graph.ENOTFOUND,
					"conflict not found: one of its facts is gone (the memories stating it expired or were deleted); nothing was changed")
			}
			facts[i] = factHit(readable[0].Values[:3], 0).Fact
		}
		// Then the temporal rules, as the resolver applies them: kept new, the old fact
		// ends when the new one began; kept old, the new one never held.
		older, newer, now := facts[0], facts[1], time.Now().UTC()
		began := c.CreatedAt
		if newer.ValidAt != nil {
			began = *newer.ValidAt
		}
		switch keep {
		case graph.KeepNew:
			older.End(began, now)
		case graph.KeepOld:
			newer.End(began, now)
		}
		records, err := db.txRun(ctx, tx, "conflict_resolve", map[string]any{"uuid": id, "group_id": c.GroupID,
			"keep": keep, "by": by, "now": now, "old": intervalRow(older), "new": intervalRow(newer)})
		if err != nil {
			return nil, err
		}
		if len(records) == 0 {
			return nil, graph.Errorf(graph.ENOTFOUND, "conflict not found") // its facts are gone
		}
		c = conflictFromProps(records[0].Values[0].(map[string]any))
		return c, db.txAudit(ctx, tx, ev)
	})
	if err != nil {
		return nil, err
	}
	c := out.(*graph.Conflict)
	hit := &graph.ConflictHit{Conflict: c}
	only := graph.Visible{GroupIDs: []string{c.GroupID}}
	for _, f := range []struct {
		id  string
		dst *graph.FactHit
	}{{c.Old, &hit.Old}, {c.New, &hit.New}} {
		got, err := db.Fact(ctx, f.id, only)
		if err != nil {
			return nil, err
		}
		*f.dst = *got
	}
	return hit, nil
}

// intervalRow is what conflict_resolve writes of a fact's time.
func intervalRow(f *graph.Fact) map[string]any {
	return map[string]any{"valid_at": optTime(f.ValidAt), "invalid_at": optTime(f.InvalidAt), "expired_at": optTime(f.ExpiredAt),
		"valid_at_assumed": f.StartAssumed, "overruled_valid_at": optTime(f.OverruledStart)}
}

func (db *DB) Usage(ctx context.Context, vis graph.Visible, q graph.UsageQuery) (graph.Usage, error) {
	if err := enumerated(vis); err != nil {
		return graph.Usage{}, err
	}
	params := visParams(vis, map[string]any{"window": window(graph.SearchFilter{CreatedAfter: q.Since, CreatedBefore: q.Until})})
	records, err := db.run(ctx, neo4j.AccessModeRead, "episode_usage", params)
	if err != nil {
		return graph.Usage{}, err
	}
	if len(records) == 0 {
		return graph.Usage{}, nil
	}
	row := records[0].AsMap()
	return graph.Usage{Memories: int(num(row["memories"])), Cost: costOf(row, "")}, nil
}

// noEpisodeIndex reports whether err says the episode_content index does not exist.
func noEpisodeIndex(err error) bool {
	var neoErr *neo4j.Neo4jError
	return errors.As(err, &neoErr) && neoErr.Code == "Neo.ClientError.Procedure.ProcedureCallFailed" &&
		strings.Contains(neoErr.Msg, "no such fulltext schema index: episode_content")
}
