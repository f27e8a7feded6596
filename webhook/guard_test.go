package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/memgate/memgate/graph"
	"github.com/memgate/memgate/webhook"
)

// TestGuard_Refused: every address kind the guard refuses, and public ones it lets
// through; with AllowPrivate, nothing is refused.
func TestGuard_Refused(t *testing.T) {
	for _, c := range []struct{ addr, why string }{
		{"127.0.0.1", "loopback"}, {"127.255.0.9", "loopback"}, {"::1", "loopback"}, {"::ffff:127.0.0.1", "loopback"},
		{"0.0.0.0", "unspecified"}, {"0.1.2.3", "unspecified"}, {"::", "unspecified"},
		{"10.0.0.1", "private"}, {"172.16.5.4", "private"}, {"192.168.1.1", "private"}, {"fd00::1", "private"},
		{"100.64.0.1", "private"}, {"100.100.100.200", "private"},
		{"169.254.169.254", "link-local"}, {"fe80::1", "link-local"}, {"224.0.0.251", "link-local"},
		{"239.1.2.3", "multicast"}, {"ff05::2", "multicast"},
		{"::127.0.0.1", "reserved"}, {"64:ff9b::7f00:1", "reserved"}, {"64:ff9b:1::a00:1", "reserved"},
		{"2002:7f00:1::", "reserved"}, {"2001:0:4136:e378::1", "reserved"}, {"255.255.255.255", "reserved"},
		{"198.18.0.1", "reserved"}, {"192.0.0.8", "reserved"},
		{"93.184.215.14", ""}, {"8.8.8.8", ""}, {"2606:4700::1111", ""}, {"172.32.0.1", ""}, {"100.128.0.1", ""},
	} {
		a := netip.MustParseAddr(c.addr)
		if got := (webhook.Guard{}).Refused(a); got != c.why {
			t.Errorf("Refused(%s) = %q, want %q", c.addr, got, c.why)
		}
		if got := (webhook.Guard{AllowPrivate: true}).Refused(a); got != "" {
			t.Errorf("with AllowPrivate, Refused(%s) = %q", c.addr, got)
		}
	}
}

// TestGuard_CheckURL: registration refuses a URL whose host resolves to a refused
// address, naming the setting, and accepts a public one.
func TestGuard_CheckURL(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{"http://127.0.0.1:8080/x", "https://[::1]/", "http://169.254.169.254/latest", "http://localhost/"} {
		err := webhook.Guard{}.CheckURL(ctx, u)
		if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(graph.ErrorMessage(err), "webhooks.allow_private") {
			t.Errorf("CheckURL(%s) = %v, want EINVALID naming webhooks.allow_private", u, err)
		}
		if err := (webhook.Guard{AllowPrivate: true}).CheckURL(ctx, u); err != nil {
			t.Errorf("with AllowPrivate, CheckURL(%s) = %v", u, err)
		}
	}
	if err := (webhook.Guard{}).CheckURL(ctx, "https://93.184.215.14/hook"); err != nil {
		t.Errorf("a public address: %v", err)
	}
}

// TestGuard_Client: the client refuses to connect to a refused address whatever the
// URL said, follows no redirect, and gives up on a slow receiver at its timeout.
func TestGuard_Client(t *testing.T) {
	hit := make(chan struct{}, 1)
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit <- struct{}{} }))
	defer target.Close()
	_, err := webhook.Guard{}.Client(time.Second).Post(target.URL, "application/json", nil)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("posting to a loopback receiver through the strict guard: %v, want refused", err)
	}
	redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	defer redirect.Close()
	resp, err := webhook.Guard{AllowPrivate: true}.Client(time.Second).Post(redirect.URL, "application/json", nil)
	if err != nil || resp.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("a redirect: %v %v, want the 307 itself", resp, err)
	} else {
		resp.Body.Close()
	}
	select {
	case <-hit:
		t.Error("a request reached the redirect's target (or the strict guard's)")
	default:
	}
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	start := time.Now()
	_, err = webhook.Guard{AllowPrivate: true}.Client(200*time.Millisecond).Post(slow.URL, "application/json", nil)
	var timeout interface{ Timeout() bool }
	if !errors.As(err, &timeout) || !timeout.Timeout() || time.Since(start) > 2*time.Second {
		t.Errorf("a slow receiver: %v after %v, want a timeout at 200 ms", err, time.Since(start))
	}
}
