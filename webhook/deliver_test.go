package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/webhook"
)

// TestDeliverer_AttemptDuration: an attempt the receiver answered, accepted or refused,
// records how long it took, as one that got no answer does.
func TestDeliverer_AttemptDuration(t *testing.T) {
	const pause = 30 * time.Millisecond // the receiver's time to answer
	for _, status := range []int{http.StatusNoContent, http.StatusServiceUnavailable} {
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
			time.Sleep(pause)
			rw.WriteHeader(status)
		}))
		d := &webhook.Deliverer{Guard: webhook.Guard{AllowLoopback: true}, Timeout: 2 * time.Second}
		w := &graph.Webhook{ID: "w1", URL: srv.URL, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
		a := d.Send(context.Background(), w, &graph.Delivery{ID: "d1", EventID: "e1"}, []byte(`{}`))
		srv.Close()
		if a.StatusCode != status || a.Millis < pause.Milliseconds() {
			t.Errorf("attempt answered %d after %s: %+v, want the status and at least %d ms", status, pause, a, pause.Milliseconds())
		}
	}
}
