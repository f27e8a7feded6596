package webhook_test

import (
	"context"
	"errors"
	"net"
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
// through; AllowLoopback opens loopback alone, Allow the networks it names, never a
// cloud metadata address unless an entry is that one address.
func TestGuard_Refused(t *testing.T) {
	for _, c := range []struct{ addr, why string }{
		{"127.0.0.1", "loopback"}, {"127.255.0.9", "loopback"}, {"::1", "loopback"}, {"::ffff:127.0.0.1", "loopback"},
		{"0.0.0.0", "unspecified"}, {"0.1.2.3", "unspecified"}, {"::", "unspecified"},
		{"10.0.0.1", "private"}, {"172.16.5.4", "private"}, {"192.168.1.1", "private"}, {"fd00::1", "private"},
		{"100.64.0.1", "private"}, {"100.100.100.200", "metadata"}, {"fd00:ec2::254", "metadata"},
		{"169.254.169.254", "metadata"}, {"169.254.170.2", "metadata"}, {"169.254.1.1", "link-local"}, {"fe80::1", "link-local"},
		{"224.0.0.251", "link-local"}, {"239.1.2.3", "multicast"}, {"ff05::2", "multicast"},
		{"::127.0.0.1", "reserved"}, {"::ffff:0:7f00:1", "reserved"}, {"fec0::1", "reserved"}, {"100::1", "reserved"},
		{"64:ff9b::7f00:1", "reserved"}, {"64:ff9b:1::a00:1", "reserved"},
		{"2002:7f00:1::", "reserved"}, {"2001:0:4136:e378::1", "reserved"}, {"255.255.255.255", "reserved"},
		{"198.18.0.1", "reserved"}, {"192.0.0.8", "reserved"},
		{"93.184.215.14", ""}, {"8.8.8.8", ""}, {"2606:4700::1111", ""}, {"172.32.0.1", ""}, {"100.128.0.1", ""},
	} {
		a := netip.MustParseAddr(c.addr)
		if got := (webhook.Guard{}).Refused(a); got != c.why {
			t.Errorf("Refused(%s) = %q, want %q", c.addr, got, c.why)
		}
		want := c.why
		if want == "loopback" {
			want = ""
		}
		if got := (webhook.Guard{AllowLoopback: true}).Refused(a); got != want {
			t.Errorf("with AllowLoopback, Refused(%s) = %q, want %q", c.addr, got, want)
		}
	}
	internal := webhook.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("169.254.0.0/16"),
		netip.MustParsePrefix("fd00::/8")}}
	for addr, want := range map[string]string{
		"10.1.2.3": "", "169.254.1.1": "", "fd00::1": "", // named networks
		"169.254.169.254": "metadata", "fd00:ec2::254": "metadata", // inside them, but metadata
		"192.168.1.1": "private", "127.0.0.1": "loopback", // not named
	} {
		if got := internal.Refused(netip.MustParseAddr(addr)); got != want {
			t.Errorf("with 10/8, 169.254/16 and fd00::/8 allowed, Refused(%s) = %q, want %q", addr, got, want)
		}
	}
	named := webhook.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")}}
	if got := named.Refused(netip.MustParseAddr("169.254.169.254")); got != "" {
		t.Errorf("a metadata address named alone: Refused = %q, want it reached", got)
	}
	if got := named.Refused(netip.MustParseAddr("169.254.170.2")); got != "metadata" {
		t.Errorf("another metadata address beside the one named: Refused = %q, want metadata", got)
	}
}

// noDNS resolves from /etc/hosts and literal addresses alone: a name the test makes up
// asks no DNS server.
var noDNS = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("no DNS server in this test")
}}

// TestGuard_CheckURL: registration refuses a URL whose host resolves to a refused
// address, or does not resolve, with one message for both (it never tells which
// names resolve, nor to what), and accepts a public one; AllowLoopback opens loopback
// URLs alone.
func TestGuard_CheckURL(t *testing.T) {
	ctx := context.Background()
	var message string
	for _, u := range []string{"http://127.0.0.1:8080/x", "https://[::1]/", "http://169.254.169.254/latest", "http://localhost/",
		"http://[::ffff:0:7f00:1]/", "http://[fec0::1]/", "http://10.0.0.1/", "http://no-such-host.invalid/"} {
		err := webhook.Guard{Resolver: noDNS}.CheckURL(ctx, u)
		if graph.ErrorCode(err) != graph.EINVALID {
			t.Errorf("CheckURL(%s) = %v, want EINVALID", u, err)
			continue
		}
		host := strings.TrimSuffix(strings.TrimPrefix(strings.Split(strings.SplitN(u, "//", 2)[1], "/")[0], "["), "]")
		host, _, _ = strings.Cut(host, ":8080")
		got := strings.ReplaceAll(graph.ErrorMessage(err), host, "HOST")
		if message == "" {
			message = got
		} else if got != message {
			t.Errorf("CheckURL(%s) says %q, another refused URL %q: want one message", u, got, message)
		}
		for _, tell := range []string{"private", "loopback", "resolve to a", "does not resolve", "metadata"} {
			if strings.Contains(graph.ErrorMessage(err), tell) && !strings.Contains(message, tell) {
				t.Errorf("CheckURL(%s) tells %q", u, tell)
			}
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080/x", "https://[::1]/", "http://localhost/"} {
		if err := (webhook.Guard{AllowLoopback: true}).CheckURL(ctx, u); err != nil {
			t.Errorf("with AllowLoopback, CheckURL(%s) = %v", u, err)
		}
	}
	for _, u := range []string{"http://169.254.169.254/latest", "http://10.0.0.1/"} {
		if err := (webhook.Guard{AllowLoopback: true}).CheckURL(ctx, u); err == nil {
			t.Errorf("with AllowLoopback, CheckURL(%s) accepted it", u)
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
	resp, err := webhook.Guard{AllowLoopback: true}.Client(time.Second).Post(redirect.URL, "application/json", nil)
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
	_, err = webhook.Guard{AllowLoopback: true}.Client(200*time.Millisecond).Post(slow.URL, "application/json", nil)
	var timeout interface{ Timeout() bool }
	if !errors.As(err, &timeout) || !timeout.Timeout() || time.Since(start) > 2*time.Second {
		t.Errorf("a slow receiver: %v after %v, want a timeout at 200 ms", err, time.Since(start))
	}
}
