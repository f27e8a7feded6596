package graph

import (
	"context"
	"time"
)

// Webhook event kinds. The memory and conflict kinds are about a space; access.denied
// is about an organization's system space (its audit log) and only an admin host's
// webhook receives it.
const (
	EventMemoryDone       = "memory.done"
	EventMemoryFailed     = "memory.failed"
	EventMemoryUpdated    = "memory.updated"
	EventMemoryDeleted    = "memory.deleted"
	EventConflictOpened   = "conflict.opened"
	EventConflictResolved = "conflict.resolved"
	EventAccessDenied     = "access.denied"
)

// MemoryEvents are the kinds an agent's or a team's webhook may subscribe to.
var MemoryEvents = []string{EventMemoryDone, EventMemoryFailed, EventMemoryUpdated, EventMemoryDeleted,
	EventConflictOpened, EventConflictResolved}

// Webhook statuses: active, or failing once a delivery ran out of retries (it keeps
// receiving new events; a success makes it active again).
const (
	WebhookActive  = "active"
	WebhookFailing = "failing"
)

// Webhook is a subscription: events of Events about the spaces GroupIDs, sent to URL
// signed with Secret, for as long as the subscriber (Requester, or for an audit webhook
// the admin host key HostKey) may see them.
type Webhook struct {
	Org       Org
	ID        string
	URL       string
	Events    []string
	Agent     string // the agent whose private and public spaces it follows, or ""
	Team      string // the team whose space it follows, or ""
	Audit     bool   // the organization's audit events (access.denied), an admin host's
	Requester string // who registered it: whose principal is checked at delivery
	HostKey   string // the host key it was registered through
	Content   bool   // include the memory's content where the subscriber may read it
	GroupIDs  []string
	Secret    string // whsec_...; returned once, when it is created
	Status    string
	CreatedAt time.Time
	FailingAt *time.Time
}

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"  // retried until the horizon, then given up
	DeliveryDropped   = "dropped" // the subscriber may no longer see its space: never sent
)

// Delivery is one event on its way to one webhook: written with the change it reports,
// in the same transaction (the outbox), then leased and sent by a deliverer.
type Delivery struct {
	ID        string
	EventID   string // the same for every webhook the change reaches; webhook-id
	WebhookID string
	Kind      string
	GroupID   string
	Subject   string // the memory, conflict or audit event it is about
	Agent     string // for memories: the agent whose memory it is
	Memory    string // for conflicts: the memory whose extraction found it
	Actor     string // for access.denied: the requester refused
	Space     string // for access.denied: the group_id refused ("" when none)
	Reason    string // for access.denied
	At        time.Time
	Status    string
	Attempts  []Attempt
	NextAt    time.Time
}

// Attempt is one try at sending a delivery.
type Attempt struct {
	At         time.Time
	StatusCode int    // the receiver's HTTP status, 0 when none came back
	Error      string // why it failed ("" for a 2xx)
	Millis     int64
}

// WebhookLimits bound the webhooks a registration may add to.
type WebhookLimits struct {
	PerRequester int // webhooks of one requester
	// PerTarget is how many webhooks one host key may register following the same
	// spaces (an agent's, a team's, the audit events): what one change can make it send.
	PerTarget int
}

// Webhooks stores subscriptions and their outbox.
type Webhooks interface {
	// CreateWebhook stores w within limits, counted in the same transaction as the
	// write, so registrations at once cannot pass them: EINVALID over a limit,
	// ECONFLICT when w's host key already has a webhook with w's URL following w's
	// spaces (identical targets are one webhook), ENOTFOUND when the agent or team
	// it follows is gone.
	CreateWebhook(ctx context.Context, w *Webhook, limits WebhookLimits) error
	// ListWebhooks lists org's webhooks registered by requester (or, with audit, the
	// audit webhooks of the organization), oldest first.
	ListWebhooks(ctx context.Context, org Org, requester string, audit bool) ([]*Webhook, error)
	// GetWebhook returns ENOTFOUND when org has no webhook id.
	GetWebhook(ctx context.Context, org Org, id string) (*Webhook, error)
	// DeleteWebhook deletes it with its deliveries; ENOTFOUND when there is none.
	DeleteWebhook(ctx context.Context, org Org, id string) error
	// Deliveries lists a webhook's deliveries about spaces in vis, newest first, at
	// most limit, each as one FinishDeliveries left it, never half recorded.
	Deliveries(ctx context.Context, org Org, id string, vis Visible, limit int) ([]*Delivery, error)
	// ClaimDeliveries leases up to n pending deliveries that are due, to webhooks of
	// requesters whose id contains scope ("" all), to worker.
	ClaimDeliveries(ctx context.Context, worker, scope string, lease time.Duration, n int) ([]ClaimedDelivery, error)
	// FinishDeliveries records worker's finished deliveries together (one transaction
	// while they fit in one): each one's attempt (nil for none) and new state. A webhook
	// is marked failing with a failed delivery, active with a delivered one. Per
	// finish, in order: nil, or ECONFLICT when worker no longer holds its lease (nothing
	// is recorded for it), or the error that kept it from being recorded.
	FinishDeliveries(ctx context.Context, worker string, fs []Finish) []error
	// PruneDeliveries erases up to limit finished deliveries of events before before.
	PruneDeliveries(ctx context.Context, before time.Time, limit int) (int, error)
}

// Finish is what became of one leased delivery: the attempt made (nil when none was:
// dropped, or released unsent) and its new state, delivered, failed or dropped, or
// pending again at Next.
type Finish struct {
	ID      string
	Attempt *Attempt
	Status  string
	Next    time.Time
}

// ClaimedDelivery is a leased delivery with its webhook.
type ClaimedDelivery struct {
	Delivery *Delivery
	Webhook  *Webhook
}
