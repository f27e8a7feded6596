package webhook

import (
	"context"

	"github.com/memgate/memgate/graph"
)

// Send makes one attempt at del to w with body, as Run's workers do.
func (d *Deliverer) Send(ctx context.Context, w *graph.Webhook, del *graph.Delivery, body []byte) graph.Attempt {
	d.client = d.Guard.Client(d.Timeout)
	return d.send(ctx, w, del, body)
}
