package neo4jstore

import (
	"context"
	"sort"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgate/memgate/graph"
)

var _ graph.Webhooks = (*DB)(nil)

var errNoWebhook = graph.Errorf(graph.ENOTFOUND, "webhook not found")

// keptAttempts is how many attempts a delivery keeps (the newest).
const keptAttempts = 20

func (db *DB) CreateWebhook(ctx context.Context, w *graph.Webhook, limits graph.WebhookLimits) error {
	records, err := db.run(ctx, neo4j.AccessModeWrite, "webhook_create", map[string]any{
		"id": w.ID, "org": string(w.Org), "url": w.URL, "events": w.Events, "agent": nullable(w.Agent),
		"team": nullable(w.Team), "audit": w.Audit, "requester": w.Requester, "host_key": w.HostKey,
		"content": w.Content, "group_ids": w.GroupIDs, "secret": w.Secret, "now": w.CreatedAt.UTC(),
		"limits": map[string]any{"per_requester": int64(limits.PerRequester), "per_target": int64(limits.PerTarget)},
	})
	if err != nil {
		return err
	}
	switch r := records[0]; str(r.Values[1]) {
	case "":
		*w = *webhookFromNode(r.Values[0].(neo4j.Node))
		return nil
	case "gone":
		if w.Team != "" {
			return graph.Errorf(graph.ENOTFOUND, "team not found")
		}
		return graph.Errorf(graph.ENOTFOUND, "agent not found")
	case "duplicate":
		if id := str(r.Values[2]); id != "" {
			return graph.Errorf(graph.ECONFLICT, "webhook %s already sends these spaces' events to this url", id)
		}
		return graph.Errorf(graph.ECONFLICT, "a webhook of this host key already sends these spaces' events to this url")
	case "requester":
		return graph.Errorf(graph.EINVALID, "a requester may register at most %d webhooks", limits.PerRequester)
	default:
		return graph.Errorf(graph.EINVALID, "a host key may register at most %d webhooks following the same agent, team or audit events", limits.PerTarget)
	}
}

func (db *DB) ListWebhooks(ctx context.Context, org graph.Org, requester string, audit bool) ([]*graph.Webhook, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "webhook_list", map[string]any{
		"org": string(org), "requester": requester, "audit": audit})
	if err != nil {
		return nil, err
	}
	out := make([]*graph.Webhook, 0, len(records))
	for _, r := range records {
		out = append(out, webhookFromNode(r.Values[0].(neo4j.Node)))
	}
	return out, nil
}

func (db *DB) GetWebhook(ctx context.Context, org graph.Org, id string) (*graph.Webhook, error) {
	records, err := db.run(ctx, neo4j.AccessModeRead, "webhook_get", map[string]any{"org": string(org), "id": id})
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, errNoWebhook
	}
	return webhookFromNode(records[0].Values[0].(neo4j.Node)), nil
}

func (db *DB) DeleteWebhook(ctx context.Context, org graph.Org, id string) error {
	records, err := db.run(ctx, neo4j.AccessModeWrite, "webhook_delete", map[string]any{"org": string(org), "id": id})
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return errNoWebhook
	}
	return nil
}

// Deliveries reads in a write transaction: each delivery under its write lock, so
// none is seen half finished (webhook_deliveries).
func (db *DB) Deliveries(ctx context.Context, org graph.Org, id string, vis graph.Visible, limit int) ([]*graph.Delivery, error) {
	records, err := db.run(ctx, neo4j.AccessModeWrite, "webhook_deliveries", visParams(vis, map[string]any{
		"org": string(org), "id": id, "limit": int64(limit)}))
	if err != nil {
		return nil, err
	}
	out := make([]*graph.Delivery, 0, len(records))
	for _, r := range records {
		out = append(out, deliveryFromNode(r.Values[0].(neo4j.Node)))
	}
	return out, nil
}

func (db *DB) ClaimDeliveries(ctx context.Context, worker, scope string, lease time.Duration, n int) ([]graph.ClaimedDelivery, error) {
	now := time.Now().UTC()
	records, err := db.run(ctx, neo4j.AccessModeWrite, "webhook_claim", map[string]any{
		"worker": worker, "scope": scope, "now": now, "lease_until": now.Add(lease), "n": int64(n)})
	if err != nil {
		return nil, err
	}
	out := make([]graph.ClaimedDelivery, 0, len(records))
	for _, r := range records {
		out = append(out, graph.ClaimedDelivery{Delivery: deliveryFromNode(r.Values[0].(neo4j.Node)),
			Webhook: webhookFromNode(r.Values[1].(neo4j.Node))})
	}
	return out, nil
}

// finish is one delivery's attempt to record (FinishDeliveries).
type finish struct {
	worker string
	graph.Finish
}

// FinishDeliveries records the finishes in the next group of finishes: in one
// transaction (one commit) while they fit in one, with any other deliverer's of this
// process finished at the same time.
func (db *DB) FinishDeliveries(ctx context.Context, worker string, fs []graph.Finish) []error {
	qs := make([]finish, len(fs))
	for i, f := range fs {
		qs[i] = finish{worker: worker, Finish: f}
	}
	held, errs := db.finishes.Do(ctx, qs...)
	for i, err := range errs {
		switch {
		case err != nil:
			errs[i] = db.storeError("webhook_finish", err)
		case !held[i]:
			errs[i] = graph.Errorf(graph.ECONFLICT, "the lease on this delivery was lost")
		}
	}
	return errs
}

// finishTogether records a group of finishes in one transaction, in the order of
// their ids (one lock order for every group), and says which were held.
func (db *DB) finishTogether(ctx context.Context, fs []finish) ([]bool, error) {
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return fs[order[a]].ID < fs[order[b]].ID })
	rows := make([]any, 0, len(fs))
	for _, i := range order {
		f := fs[i]
		var attempt any
		if a := f.Attempt; a != nil {
			attempt = map[string]any{"at": a.At.UTC(), "status": int64(a.StatusCode), "error": a.Error, "ms": a.Millis}
		}
		rows = append(rows, map[string]any{"id": f.ID, "worker": f.worker, "attempt": attempt, "status": f.Status, "next": f.Next.UTC()})
	}
	records, err := db.run(ctx, neo4j.AccessModeWrite, "webhook_finish", map[string]any{
		"rows": rows, "keep": int64(keptAttempts), "now": time.Now().UTC()})
	if err != nil {
		return nil, err
	}
	recorded := map[string]bool{}
	for _, r := range records {
		recorded[str(r.Values[0])] = true
	}
	out := make([]bool, len(fs))
	for i, f := range fs {
		out[i] = recorded[f.ID]
	}
	return out, nil
}

func (db *DB) PruneDeliveries(ctx context.Context, before time.Time, limit int) (int, error) {
	records, err := db.run(ctx, neo4j.AccessModeWrite, "webhook_prune", map[string]any{
		"before": before.UTC(), "limit": int64(limit)})
	if err != nil || len(records) == 0 {
		return 0, err
	}
	return int(num(records[0].Values[0])), nil
}

func webhookFromNode(n neo4j.Node) *graph.Webhook {
	p := n.Props
	w := &graph.Webhook{Org: graph.Org(str(p["org"])), ID: str(p["id"]), URL: str(p["url"]), Events: strList(p["events"]),
		Agent: str(p["agent"]), Team: str(p["team"]), Audit: p["audit"] == true, Requester: str(p["requester"]),
		HostKey: str(p["host_key"]), Content: p["content"] == true, GroupIDs: strList(p["group_ids"]),
		Secret: str(p["secret"]), Status: str(p["status"]), CreatedAt: tm(p["created_at"]), FailingAt: timePtr(p["failing_at"])}
	return w
}

func deliveryFromNode(n neo4j.Node) *graph.Delivery {
	p := n.Props
	d := &graph.Delivery{ID: str(p["id"]), EventID: str(p["event_id"]), WebhookID: str(p["webhook_id"]), Kind: str(p["kind"]),
		GroupID: str(p["group_id"]), Subject: str(p["subject"]), Agent: str(p["agent"]), Memory: str(p["memory"]),
		Actor: str(p["actor"]), Space: str(p["space"]), Reason: str(p["reason"]), At: tm(p["at"]), Status: str(p["status"]),
		NextAt: tm(p["next_at"])}
	at, codes, errs, ms := anyList(p["attempt_at"]), anyList(p["attempt_status"]), anyList(p["attempt_error"]), anyList(p["attempt_ms"])
	for i := range at {
		a := graph.Attempt{At: tm(at[i])}
		if i < len(codes) {
			a.StatusCode = int(num(codes[i]))
		}
		if i < len(errs) {
			a.Error = str(errs[i])
		}
		if i < len(ms) {
			a.Millis = num(ms[i])
		}
		d.Attempts = append(d.Attempts, a)
	}
	return d
}
