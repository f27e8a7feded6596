package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/service"
)

// Deliverer sends the outbox's deliveries until its context ends. Any number of
// processes may run one against the same database: a delivery is leased to one at a
// time (webhook_claim), for longer than one attempt can take.
type Deliverer struct {
	Store   graph.Webhooks
	Service *service.Service // WebhookAudience: who may still see what
	Guard   Guard
	Log     *slog.Logger
	// Workers is how many deliveries are sent at once.
	Workers int
	// Timeout ends one attempt (connection, TLS, headers and body).
	Timeout time.Duration
	// Poll is how often an idle deliverer looks for due deliveries.
	Poll time.Duration
	// BackoffMin and BackoffMax bound the wait before a retry: BackoffMin doubled per
	// attempt, at most BackoffMax, of which a random part up to half is taken off.
	BackoffMin, BackoffMax time.Duration
	// Horizon is how long after its event a delivery is retried; then it fails and its
	// webhook is marked failing.
	Horizon time.Duration
	// Retention is how long finished deliveries are kept for GET .../deliveries.
	Retention time.Duration
	// Scope limits the deliverer to the webhooks of requesters whose id contains it
	// ("" all): tests, whose ids carry a mark of their own.
	Scope string
	// OnAttempt, when set, hears of each attempt's outcome (metrics): delivered,
	// retry, failed, dropped or error.
	OnAttempt func(outcome string)

	id     string
	client *http.Client
}

// claimBatch is how many deliveries one claim leases at most: one claim transaction,
// one resolution of each subscriber and one transaction recording the attempts for up
// to this many deliveries, however few workers send them.
const claimBatch = 64

// Run delivers until ctx ends, then returns once every attempt under way has ended
// and been recorded. It claims when a worker is free, up to claimBatch deliveries at
// once, and sends them Workers at a time; the batch's attempts are recorded together
// once its last one has ended. After a claim that found fewer than it asked for, it
// waits Poll before it claims again (what comes due meanwhile waits for the next
// batch), so a deliverer that keeps up claims a few times a second, not once per
// event.
func (d *Deliverer) Run(ctx context.Context) {
	d.id = workerID()
	d.client = d.Guard.Client(d.Timeout)
	lease := 2*d.Timeout + 10*time.Second // longer than any attempt
	pruned := time.Time{}
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, max(d.Workers, 1)) // one per attempt under way
	for claims := 1; ctx.Err() == nil; claims++ {
		if time.Since(pruned) > time.Hour && d.Retention > 0 {
			pruned = time.Now()
			if n, err := d.Store.PruneDeliveries(ctx, time.Now().Add(-d.Retention), 10000); err != nil {
				d.Log.Warn("pruning webhook deliveries", "error", err.Error())
			} else if n > 0 {
				d.Log.Info("pruned webhook deliveries", "deliveries", n)
			}
		}
		select { // a free worker for the batch's first delivery
		case <-ctx.Done():
			continue
		case slots <- struct{}{}:
		}
		// Each claim leases under a name of its own, so that a batch whose lease ran
		// out (and was claimed again, by this process or another) records nothing
		// over what the next holder does.
		owner := fmt.Sprintf("%s#%d", d.id, claims)
		claimedAt := time.Now()
		claimed, err := d.Store.ClaimDeliveries(ctx, owner, d.Scope, lease, claimBatch)
		if err != nil && ctx.Err() == nil {
			d.Log.Warn("claiming webhook deliveries", "worker", d.id, "error", err.Error())
		}
		if len(claimed) > 0 {
			wg.Add(1)
			d.sendBatch(ctx, owner, claimed, claimedAt.Add(lease), slots, wg.Done)
		} else {
			<-slots
		}
		if err == nil && len(claimed) == claimBatch {
			continue // more may be due
		}
		select {
		case <-ctx.Done():
		case <-time.After(d.Poll):
		}
	}
}

// sendBatch sends the claimed deliveries, leased until leaseEnds, each as a slot
// is free (the caller holds one for the first), and returns once the last has
// started; the attempts are recorded together when the last has ended, then done is
// called. The batch's subscribers are resolved once each, just before it is sent, and
// again for what is left of it whenever a delivery would start more than judgedFor
// after that judgement. An attempt starts only while its lease outlasts it: what a
// batch could not start in time (slow receivers ahead of it) or before a shutdown is
// released unsent, due at once for whichever deliverer claims it next.
func (d *Deliverer) sendBatch(ctx context.Context, owner string, claimed []graph.ClaimedDelivery, leaseEnds time.Time,
	slots chan struct{}, done func()) {
	audiences := make([]service.Audience, len(claimed))
	errs := make([]error, len(claimed))
	var judged time.Time
	judge := func(from int) { // the audiences of claimed[from:], each subscriber resolved once
		subscribers := d.Service.Subscribers()
		for j := from; j < len(claimed); j++ {
			audiences[j], errs[j] = subscribers.Audience(ctx, claimed[j].Webhook, claimed[j].Delivery)
		}
		judged = time.Now()
	}
	judge(0)
	finishes := make([]*graph.Finish, len(claimed)) // nil: nothing to record
	var sending sync.WaitGroup
	for i, c := range claimed {
		held := i == 0 // the caller's slot
		if !held {
			select {
			case <-ctx.Done():
			case slots <- struct{}{}:
				held = true
			}
		}
		if ctx.Err() != nil || time.Until(leaseEnds) < d.Timeout+leaseMargin {
			if held {
				<-slots
			}
			released := make([]*graph.Finish, 0, len(claimed)-i)
			for _, u := range claimed[i:] {
				released = append(released, &graph.Finish{ID: u.Delivery.ID, Status: graph.DeliveryPending, Next: time.Now()})
			}
			d.record(ctx, owner, released)
			break
		}
		if time.Since(judged) > judgedFor {
			judge(i) // slow receivers held the batch: what is left of it is judged again
		}
		sending.Add(1)
		go func() {
			defer func() {
				<-slots
				sending.Done()
			}()
			finishes[i] = d.deliver(ctx, c, audiences[i], errs[i])
		}()
	}
	go func() {
		defer done()
		sending.Wait()
		d.record(ctx, owner, finishes)
	}()
}

// judgedFor is how long a batch's judgement of who may see what stands: a delivery
// starts at most this long after the Authorizer last judged its subscriber, so a
// revoked share stops deliveries from then on however slow the receivers before it.
const judgedFor = time.Second

// leaseMargin is what an attempt's lease must still have after the attempt's
// timeout when it starts: time to record it.
const leaseMargin = 5 * time.Second

// record records the batch's finishes, leased under owner, in one transaction. It uses a context of its
// own, so a shutdown during the attempts still records them (or leaves their leases
// to expire).
func (d *Deliverer) record(ctx context.Context, owner string, finishes []*graph.Finish) {
	fs := make([]graph.Finish, 0, len(finishes))
	for _, f := range finishes {
		if f != nil {
			fs = append(fs, *f)
		}
	}
	if len(fs) == 0 {
		return
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for i, err := range d.Store.FinishDeliveries(fctx, owner, fs) {
		if err != nil {
			d.Log.Warn("recording a webhook attempt", "delivery_id", fs[i].ID, "status", fs[i].Status, "error", err.Error())
		}
	}
}

func workerID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

func (d *Deliverer) outcome(o string) {
	if d.OnAttempt != nil {
		d.OnAttempt(o)
	}
}

// deliver makes one attempt at c, whose audience was decided as aud (or could not be:
// err), and returns what to record of it: nil for nothing (interrupted by a shutdown,
// the lease expires and another process sends it).
func (d *Deliverer) deliver(ctx context.Context, c graph.ClaimedDelivery, aud service.Audience, err error) *graph.Finish {
	del, w := c.Delivery, c.Webhook
	finish := func(a *graph.Attempt, status string, next time.Time) *graph.Finish {
		return &graph.Finish{ID: del.ID, Attempt: a, Status: status, Next: next}
	}
	log := func() *slog.Logger {
		return d.Log.With("webhook_id", w.ID, "delivery_id", del.ID, "event_id", del.EventID, "kind", del.Kind)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil // shutting down: the lease expires and another process sends it
		}
		log().Warn("checking a webhook subscriber's access", "error", err.Error())
		d.outcome("error")
		return finish(nil, graph.DeliveryPending, time.Now().Add(d.backoff(len(del.Attempts))))
	}
	if !aud.Sees {
		d.outcome("dropped")
		return finish(nil, graph.DeliveryDropped, time.Now())
	}
	body, err := json.Marshal(payloadOf(del, aud))
	if err != nil {
		log().Error("encoding a webhook payload", "error", err.Error())
		return nil
	}
	a := d.send(ctx, w, del, body)
	if ctx.Err() != nil && a.StatusCode == 0 {
		return nil // interrupted by shutdown: sent again after the lease expires
	}
	switch {
	case a.StatusCode >= 200 && a.StatusCode < 300:
		d.outcome("delivered")
		return finish(&a, graph.DeliveryDelivered, time.Now())
	default:
		next := time.Now().Add(d.backoff(len(del.Attempts)))
		if next.After(del.At.Add(d.Horizon)) {
			d.outcome("failed")
			log().Warn("webhook delivery failed for good; the webhook is marked failing", "attempts", len(del.Attempts)+1,
				"status", a.StatusCode, "error", a.Error)
			return finish(&a, graph.DeliveryFailed, time.Now())
		}
		d.outcome("retry")
		return finish(&a, graph.DeliveryPending, next)
	}
}

// backoff is the wait after the n+1th failed attempt: BackoffMin·2ⁿ up to BackoffMax,
// less a random part of up to half (jitter, so receivers coming back are not hit by
// every retry at once).
func (d *Deliverer) backoff(n int) time.Duration {
	wait := float64(d.BackoffMin) * math.Pow(2, float64(min(n, 30)))
	wait = min(wait, float64(d.BackoffMax))
	return time.Duration(wait * (1 - mrand.Float64()/2))
}

// send posts body to w, signed, and returns the attempt, its duration included (a is
// named so that the deferred measurement is what the caller gets).
func (d *Deliverer) send(ctx context.Context, w *graph.Webhook, del *graph.Delivery, body []byte) (a graph.Attempt) {
	start := time.Now()
	a = graph.Attempt{At: start.UTC()}
	defer func() { a.Millis = time.Since(start).Milliseconds() }()
	signer, err := standardwebhooks.NewWebhook(w.Secret)
	if err != nil {
		a.Error = "the webhook's secret is unusable"
		return a
	}
	sig, err := signer.Sign(del.EventID, start, body)
	if err != nil {
		a.Error = "signing failed"
		return a
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		a.Error = "the webhook's url is unusable"
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "memgate-webhooks")
	req.Header.Set(standardwebhooks.HeaderWebhookID, del.EventID)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(start.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	resp, err := d.client.Do(req)
	if err != nil {
		a.Error = failure(err)
		d.Log.Info("webhook attempt failed", "delivery_id", del.ID, "webhook_id", w.ID, "error", err.Error())
		return a
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	a.StatusCode = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		a.Error = fmt.Sprintf("the receiver answered HTTP %d", resp.StatusCode)
	}
	return a
}

// failure is what an attempt records of a request that got no answer: a short
// reason of memgate's own, never the address dialled nor anything the receiver's
// network said (the log has the error in full).
func failure(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, errRefused):
		return "the receiver's address is one webhooks may not reach"
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		return "the receiver did not answer in time"
	case errors.As(err, &dns):
		return "the receiver's host did not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the receiver refused the connection"
	case errors.As(err, &op) && op.Op == "dial":
		return "the receiver could not be reached"
	}
	return "the request to the receiver failed"
}

// Payload is the body of every webhook request: the Standard Webhooks envelope
// (type, timestamp, data). It holds ids, kinds and times; the content only when the
// webhook asks for it and its subscriber may read the memory.
type Payload struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"` // when the change happened
	Data      Data      `json:"data"`
}

// Data is what an event is about; each kind fills its own fields.
type Data struct {
	EventID      string  `json:"event_id"`
	WebhookID    string  `json:"webhook_id"`
	GroupID      string  `json:"group_id"`
	Space        string  `json:"space"` // private, public, team:<name>, shared, global, system
	MemoryID     string  `json:"memory_id,omitempty"`
	AgentID      string  `json:"agent_id,omitempty"`
	ConflictID   string  `json:"conflict_id,omitempty"`
	Content      *string `json:"content,omitempty"`
	AuditEventID string  `json:"audit_event_id,omitempty"`
	Actor        string  `json:"actor,omitempty"`
	DeniedSpace  string  `json:"denied_space,omitempty"`
	Reason       string  `json:"reason,omitempty"`
}

func payloadOf(del *graph.Delivery, aud service.Audience) Payload {
	data := Data{EventID: del.EventID, WebhookID: del.WebhookID, GroupID: del.GroupID}
	if s, ok := graph.ParseGroupID(del.GroupID); ok {
		data.Space = s.Name()
	}
	switch del.Kind {
	case graph.EventConflictOpened, graph.EventConflictResolved:
		data.ConflictID, data.MemoryID = del.Subject, del.Memory
	case graph.EventAccessDenied:
		data.AuditEventID, data.Actor, data.DeniedSpace, data.Reason = del.EventID, del.Actor, del.Space, del.Reason
	default:
		data.MemoryID, data.AgentID, data.Content = del.Subject, del.Agent, aud.Content
	}
	return Payload{Type: del.Kind, Timestamp: del.At, Data: data}
}
